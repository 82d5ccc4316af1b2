#!/usr/bin/env bash
# Create the isolated ns-3 virtual environment used by ns3_dumbbell.py.
#
# ns-3 lives in its own venv because the `ns.py` package installs a top-level
# `ns` module that shadows the one from the ns3 wheel. Idempotent: the wheel is
# only installed when `from ns import ns` does not already work in the venv.
set -euo pipefail

NS3_VERSION="3.44.post0"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$here/.venv-ns3"

if [[ ! -x "$venv/bin/python" ]]; then
    python3 -m venv "$venv"
fi

if "$venv/bin/python" -c 'from ns import ns' >/dev/null 2>&1; then
    echo "ns3 already importable in $venv"
else
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    "$venv/bin/python" -m pip install --quiet "ns3==$NS3_VERSION"
    "$venv/bin/python" -c 'from ns import ns' >/dev/null
    echo "installed ns3==$NS3_VERSION into $venv"
fi
echo "ns-3 python: $venv/bin/python"
