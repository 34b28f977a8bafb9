#!/usr/bin/env bash
# The whole test suite: Rust unit and integration tests, then the Python driver tests
# against a real `helenus` binary on loopback.
set -euo pipefail
cd "$(dirname "$0")"

cargo build --workspace --all-targets
cargo test --workspace

if [ ! -x .venv/bin/pytest ]; then
  python3 -m venv .venv
  .venv/bin/pip install -q --upgrade pip
fi
.venv/bin/pip install -q -r tests/integration/requirements.txt
HELENUS_BIN="${CARGO_TARGET_DIR:-$PWD/target}/debug/helenus" .venv/bin/pytest -q -n "${HELENUS_TEST_WORKERS:-2}" --dist loadgroup --durations=20 tests/integration
