set -u
for round in 1 2 3; do
  PYTHONPATH=/tmp/site:$PWD/.variants/old_src/src python3 .variants/s26_ab.py old 2>&1 | grep -v -i warn
  PYTHONPATH=/tmp/site:$PWD/src python3 .variants/s26_ab.py new 2>&1 | grep -v -i warn
done
PYTHONPATH=/tmp/site:$PWD/src python3 - <<'PY'
import torch
for name in ("default", "parity"):
    a = torch.load(f"/tmp/ab_old_{name}.pt"); b = torch.load(f"/tmp/ab_new_{name}.pt")
    print(name, "moments bit-identical:", torch.equal(a["j"], b["j"]), "recon bit-identical:", torch.equal(a["r"], b["r"]))
PY
