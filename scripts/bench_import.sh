#!/usr/bin/env bash
# Speed of `kcast import --aggregate` on a generated nsys cuda_gpu_trace CSV, next to Python's csv
# module merely reading the same file (the baseline a Python importer could at best reach).
# Prints size, wall and CPU seconds, MB/s, rows/s and peak memory of both, and the speed ratio.
#
# usage: scripts/bench_import.sh [ROWS] [KCAST_BINARY]    (defaults: 1000000, build*/kcast)
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS="${1:-1000000}"
# shellcheck source=scripts/bench_setup.sh
. scripts/bench_setup.sh bench_import.sh "${2:-}"
CSV="$WORK/trace.csv"

# A capture shaped like `nsys stats --report cuda_gpu_trace --format csv`: banner lines, then kernels
# of a training step (GEMMs, elementwise, softmax, reductions, copies) with realistic names.
python3 - "$ROWS" "$CSV" <<'PY'
import sys
rows, path = int(sys.argv[1]), sys.argv[2]
names = [
    "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn",
    '"void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char *, 1>>(int, T2, T3)"',
    '"void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::Half, float, c10::Half, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(T4 *, const T2 *, int)"',
    '"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4>>(T3)"',
    "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_g1_tensor16x8x8_kernel",
    '"void cutlass::Kernel<cutlass_80_tensorop_f16_s16816gemm_relu_f16_64x64_32x6_tn_align8>(Params)"',
]
with open(path, "w") as f:
    f.write("Generating SQLite file report1.sqlite from report1.nsys-rep\n")
    f.write("Processing [report1.sqlite] with [/opt/nvidia/nsight-systems/2024.2.1/host-linux-x64/reports/cuda_gpu_trace.py]... \n\n")
    f.write("Start (ns),Duration (ns),CorrId,GrdX,GrdY,GrdZ,BlkX,BlkY,BlkZ,Reg/Trd,StcSMem (MB),DymSMem (MB),"
            "Bytes (MB),Throughput (MBps),SrcMemKd,DstMemKd,Device,Ctx,Strm,Name\n")
    t = 506384935
    out = []
    for i in range(rows):
        d = 1500 + (i * 7919) % 90000
        k = i % 16
        if k == 15:
            out.append(f"{t},{d},{i},,,,,,,,,,4.194,{4.194e9 / d:.3f},Pageable,Device,NVIDIA A100-SXM4-40GB (0),1,7,[CUDA memcpy Host-to-Device]\n")
        elif k == 14:
            out.append(f"{t},{d},{i},,,,,,,,,,1.049,{1.049e9 / d:.3f},Device,,NVIDIA A100-SXM4-40GB (0),1,7,[CUDA memset]\n")
        else:
            n = k % len(names)
            out.append(f"{t},{d},{i},{16 + (i % 7)},32,1,128,1,1,{64 + n},0.000,0.049,,,,,NVIDIA A100-SXM4-40GB (0),1,7,{names[n]}\n")
        t += d + 1200
        if len(out) >= 10000:
            f.writelines(out)
            out = []
    f.writelines(out)
PY

BYTES=$(stat -c %s "$CSV")
MB=$(python3 -c "print(round($BYTES / 1e6, 1))")
echo "input: $ROWS rows, $MB MB (nsys cuda_gpu_trace CSV)"

measure() {  # measure LABEL CMD...  -> sets WALL, CPU, RSS_MB
  local label="$1"
  shift
  /usr/bin/time -f "%e %U %S %M" -o "$WORK/time" "$@" >/dev/null
  read -r WALL USR SYS RSS <"$WORK/time"
  CPU=$(python3 -c "print(round($USR + $SYS, 2))")
  RSS_MB=$((RSS / 1024))
  python3 -c "
w = max($WALL, 1e-3)
print(f'{\"$label\":<34} wall {w:6.2f} s  cpu {$CPU:6.2f} s  {$BYTES / 1e6 / w:8.1f} MB/s  {$ROWS / w / 1e6:6.2f} M rows/s  peak RSS {$RSS_MB} MB')"
}

measure "kcast import --aggregate" "$KCAST" import "$CSV" --aggregate
KW=$WALL
KC=$CPU
# Every kernel kept: a million-row kernel list written (the issue's `kcast import` of such a trace).
measure "kcast import -o list.csv" "$KCAST" import "$CSV" -o "$WORK/list.csv"
FW=$WALL
measure "python3 csv.reader (read only)" python3 -c "
import csv, sys
n = 0
with open(sys.argv[1], newline='') as f:
    for row in csv.reader(f):
        n += 1
" "$CSV"
python3 -c "print(f'kcast import --aggregate is {max($WALL, 1e-3) / max($KW, 1e-3):.1f}x faster (wall), {max($CPU, 1e-3) / max($KC, 1e-3):.1f}x (cpu); full import {max($FW, 1e-3) / max($WALL, 1e-3):.2f}x the python read (target <= 0.5x)')"
