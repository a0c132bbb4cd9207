#!/usr/bin/env bash
# Renders a kcast HTML report in headless Chromium to a PNG, to check that the page draws.
#   scripts/html_screenshot.sh REPORT.html [OUT.png] [WIDTHxHEIGHT]
# Needs chromium (Debian: apt-get install -y chromium). The page is opened as a local file; it makes
# no network requests (kcast reports are self-contained).
set -euo pipefail
in=${1:?usage: $0 REPORT.html [OUT.png] [WIDTHxHEIGHT]}
out=${2:-${in%.html}.png}
size=${3:-1200x900}
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [[ -z $browser ]]; then
  echo "html_screenshot: no chromium found (apt-get install -y chromium)" >&2
  exit 1
fi
abs=$(cd "$(dirname "$in")" && pwd)/$(basename "$in")
case $out in /*) ;; *) out=$PWD/$out ;; esac
# --no-sandbox: containers usually run as root, where Chromium refuses to start sandboxed.
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --screenshot="$out" \
  --window-size="${size/x/,}" "file://$abs" >/dev/null 2>&1
[[ -s $out ]] || { echo "html_screenshot: no screenshot written" >&2; exit 1; }
echo "$out"
