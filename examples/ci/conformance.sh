#!/bin/sh
# Run the conformance kit in CI: start the agent, wait for its card, run
# `a2a-interview conformance` and keep its JUnit report; fail only on a draft-level
# failure. docs/conformance.md ("In CI") shows this file and the job that runs it.
#
#   sh conformance.sh URL [COMMAND ...]
#
# URL is the agent's base URL; COMMAND starts it (omit it when it already runs).
# OUT (default: conformance-results) receives conformance.xml and agent.log; WAIT
# (default: 60) is how many seconds the agent has to serve its card.
# Exit codes, the kit's: 0 conformant at the draft level, 1 a draft-level failure,
# 2 usage error or a card that cannot be tested, 3 unreachable (or never came up).
set -u
if [ $# -lt 1 ]; then
    echo "usage: conformance.sh URL [COMMAND ...]" >&2
    exit 2
fi
url=$1
shift
out=${OUT:-conformance-results}
wait_s=${WAIT:-60}
mkdir -p "$out" || exit 2

agent=""
stop_agent() {
    if [ -n "$agent" ]; then
        kill "$agent" 2>/dev/null
        wait "$agent" 2>/dev/null
        agent=""
    fi
}
trap stop_agent EXIT
trap 'stop_agent; exit 3' INT TERM
if [ $# -gt 0 ]; then
    "$@" >"$out/agent.log" 2>&1 &
    agent=$!
fi

card="${url%/}/.well-known/agent-card.json"
waited=0
until python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=5)' \
        "$card" 2>/dev/null; do
    if [ -n "$agent" ] && ! kill -0 "$agent" 2>/dev/null; then
        echo "conformance: the agent exited before serving $card (see $out/agent.log)" >&2
        agent=""
        exit 3
    fi
    if [ "$waited" -ge "$wait_s" ]; then
        echo "conformance: no card at $card after ${wait_s}s" >&2
        exit 3
    fi
    sleep 1
    waited=$((waited + 1))
done

a2a-interview conformance "$url" --junit "$out/conformance.xml"
status=$?
case $status in
    0) echo "conformance: conformant at the draft level (exit 0)" >&2 ;;
    1) echo "conformance: a draft-level failure, see the table (exit 1)" >&2 ;;
    *) echo "conformance: could not run the kit (exit $status)" >&2 ;;
esac
exit "$status"
