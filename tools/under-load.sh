#!/usr/bin/env bash
# Runs a command while CPU-bound processes run beside it, as on a newcomer's busy machine:
#   bash tools/under-load.sh make test
# LOAD_PROCESSES (default 2, one per core here) busy loops start first and are killed when the
# command ends, however it ends. Its exit status is the command's.
set -euo pipefail
burners=()
stop_burners() {
    if ((${#burners[@]})); then
        kill "${burners[@]}" 2>/dev/null || true
        wait "${burners[@]}" 2>/dev/null || true
    fi
}
trap stop_burners EXIT
for _ in $(seq "${LOAD_PROCESSES:-2}"); do
    bash -c 'while :; do :; done' &
    burners+=("$!")
done
echo "under-load: ${#burners[@]} CPU-bound processes beside: $*" >&2
"$@"
