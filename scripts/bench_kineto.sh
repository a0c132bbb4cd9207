#!/usr/bin/env bash
# Memory and speed of `kcast import` on a generated PyTorch profiler (Kineto) trace: per launched
# kernel a python_function, a cpu_op with its input shapes, the cuda_runtime launch and the kernel, as
# export_chrome_trace writes them. Prints the file size, wall time and peak memory (RSS) of the import
# and that peak over the file size (the goal: at most 1.5x; a DOM of the whole trace took 8.5x).
#
# usage: scripts/bench_kineto.sh [KERNELS] [KCAST_BINARY]    (defaults: 400000, build*/kcast)
set -euo pipefail
cd "$(dirname "$0")/.."
KERNELS="${1:-400000}"
# shellcheck source=scripts/bench_setup.sh
. scripts/bench_setup.sh bench_kineto.sh "${2:-}"
TRACE="$WORK/trace.json"

python3 - "$KERNELS" "$TRACE" <<'PY'
import sys
n, path = int(sys.argv[1]), sys.argv[2]
names = ["ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_stages_32x5_tn",
         "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, at::detail::Array<char *, 3>>(int, T2, T3)",
         "void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(T4 *, const T2 *, int)",
         "void vllm::rms_norm_kernel<c10::BFloat16>(c10::BFloat16 *, const c10::BFloat16 *, const c10::BFloat16 *, float, int, int)"]
with open(path, "w") as f:
    f.write('{"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", '
            '"totalGlobalMem": 85095874560, "computeMajor": 8, "computeMinor": 0, "numSms": 108}],\n'
            '"traceEvents": [\n')
    f.write('{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, '
            '"dur": %d, "args": {"External id": 0}}' % (n * 20 + 100))
    t, out = 10.0, []
    for i in range(n):
        ext, corr, k = 10 + i, 100000 + i, i % len(names)
        out.append(',\n{"ph": "X", "cat": "python_function", "name": "torch/nn/modules/linear.py(125): forward", '
                   '"pid": 1, "tid": 1, "ts": %.3f, "dur": 9.0, "args": {"Python parent id": 3, "Python id": %d}}' % (t, ext))
        out.append(',\n{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": %.3f, "dur": 8.0, '
                   '"args": {"External id": %d, "Sequence number": %d, "Fwd thread id": 0, "Record function id": 0, '
                   '"Concrete Inputs": ["", ""], "Input type": ["c10::BFloat16", "c10::BFloat16"], '
                   '"Input Strides": [[4096, 1], [1, 4096]], "Input Dims": [[2048, 4096], [4096, 4096]], '
                   '"Ev Idx": %d}}' % (t + 0.5, ext, i, i))
        out.append(',\n{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": %.3f, '
                   '"dur": 4.0, "args": {"External id": %d, "cbid": 211, "correlation": %d}}' % (t + 1, ext, corr))
        out.append(',\n{"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7, "ts": %.3f, "dur": %.3f, '
                   '"args": {"External id": %d, "queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": %d, '
                   '"registers per thread": 232, "shared memory": 98304, "blocks per SM": 1.185185, '
                   '"warps per SM": 9.481482, "grid": [16, 8, 1], "block": [256, 1, 1], '
                   '"est. achieved occupancy %%": 13}}' % (names[k], t + 3, 5.0 + k, ext, corr))
        t += 20.0
        if len(out) >= 40000:
            f.writelines(out)
            out = []
    f.writelines(out)
    f.write('\n], "traceName": "trace.json"}\n')
PY

BYTES=$(stat -c %s "$TRACE")
echo "input: $KERNELS kernels, $((BYTES / 1000000)) MB (PyTorch profiler trace)"
for mode in "" "--aggregate"; do
  /usr/bin/time -f "%e %M" -o "$WORK/time" "$KCAST" import "$TRACE" $mode -o "$WORK/out.csv" >/dev/null
  read -r WALL RSS <"$WORK/time"
  python3 -c "
b, rss, w = $BYTES, $RSS * 1024, max($WALL, 1e-3)
print(f'kcast import ${mode:-(every kernel)}: wall {w:.2f} s, {b / 1e6 / w:.1f} MB/s, peak RSS {rss / 1e6:.0f} MB = {rss / b:.2f}x the file')"
done
