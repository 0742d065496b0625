#!/usr/bin/env bash
# The TensorRT path on a real GPU: builds engines for the tiny test models and a ~20M encoder, checks
# their labels against ONNX Runtime CPU, prints pages/s, then runs the TensorRT tests.
# Needs: an NVIDIA L4 (sm_89) or A100 (sm_80), `pip install -e '.[test,gpu]'` (TensorRT 10.x or 11.x wheels
# from NVIDIA; see `extract-trt doctor`), and /work/shared/data (or ../shared/data) for the pages.
#   scripts/gpu-check.sh            # GPU detected with nvidia-smi
#   scripts/gpu-check.sh a100
set -euo pipefail
cd "$(dirname "$0")/.."
extract-trt doctor
python -c "import tensorrt, torch; assert torch.cuda.is_available(); print('TensorRT', tensorrt.__version__, torch.cuda.get_device_name(0))"
gpu="${1:-}"
if [ -z "$gpu" ]; then
  case "$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1)" in
    8.9) gpu=l4 ;;
    8.0) gpu=a100 ;;
    *) echo "gpu-check: this GPU is neither an L4 (8.9) nor an A100 (8.0); pass l4 or a100 to force" >&2; exit 2 ;;
  esac
fi
python scripts/gpu_check.py --gpu "$gpu"
python -m pytest tests/test_trt.py tests/test_export.py -q -p no:warnings
