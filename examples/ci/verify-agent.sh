#!/bin/sh
# Interview an A2A agent in CI: start it, wait for its card, run `a2a-interview verify`,
# and keep the JUnit report and the signed-or-not result record as artifacts.
#
#   sh verify-agent.sh URL [COMMAND ...]
#
#   URL      the agent's base URL (or its card URL), e.g. http://127.0.0.1:8000
#   COMMAND  how to start the agent; it runs in the background and is stopped at the end.
#            Omit it when the agent is already running (a service container, a deploy).
#
# Environment (all optional):
#   OUT          artifact folder (default: a2a-interview-results); it receives
#                junit.xml (one test case per check, for the CI's test view),
#                record.json (the result record: docs/profile.md §8),
#                report.txt (the report for people), agent.log (the agent's output)
#   WAIT         seconds to wait for the agent's card to be served (default: 60)
#   VERIFY_ARGS  more options for `a2a-interview verify`, e.g. "--deadline 300" or
#                "--jwks keys.json" or "--as platform --name CI --runner-key ci.seed"
#   REQUIRE_SIGNATURE  1 (default): `verify --require-signature`, so a card that is
#                unsigned, or whose signature cannot be checked (no jku, no --jwks),
#                fails (exit 1); 0: such a card passes with an advisory (the way out
#                for an agent whose card is not signed yet; docs/ci.md)
#   A2A_INTERVIEW  the command to run (default: a2a-interview)
#
# Exit codes (those of `a2a-interview verify`; docs/ci.md says what to do with each):
#   0  consistent (or churn: a conflict that vanished on the re-run)   -> pass
#   1  non_conformant: the agent's answers contradict what it declared,
#      or (REQUIRE_SIGNATURE=1) its card signature cannot be checked   -> fail
#   2  usage error: bad options or arguments of this script or verify  -> fail
#   3  unreachable or could not complete; also: the agent never served its card
#      within WAIT seconds, or exited before it did                    -> fail
#   4  not_offered: the card does not declare the interview            -> your choice
set -u

if [ $# -lt 1 ]; then
    echo "usage: verify-agent.sh URL [COMMAND ...]" >&2
    exit 2
fi
url=$1
shift
out=${OUT:-a2a-interview-results}
wait_s=${WAIT:-60}
cli=${A2A_INTERVIEW:-a2a-interview}
case ${REQUIRE_SIGNATURE:-1} in
    1) signature=--require-signature ;;
    0) signature="" ;;
    *) echo "verify-agent: REQUIRE_SIGNATURE is 1 or 0" >&2; exit 2 ;;
esac
mkdir -p "$out" || exit 2

case $url in
    */.well-known/agent-card.json) card=$url ;;
    *) card="${url%/}/.well-known/agent-card.json" ;;
esac

fetch() {  # exit 0 when the card URL answers 2xx
    if command -v curl >/dev/null 2>&1; then
        curl -fsS -o /dev/null --max-time 5 "$1" 2>/dev/null
    else
        python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=5)' \
            "$1" 2>/dev/null
    fi
}

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

# Wait for the card: the agent is up when it serves it.
waited=0
until fetch "$card"; do
    if [ -n "$agent" ] && ! kill -0 "$agent" 2>/dev/null; then
        echo "verify-agent: the agent exited before serving $card (see $out/agent.log)" >&2
        agent=""
        exit 3
    fi
    if [ "$waited" -ge "$wait_s" ]; then
        log=""
        [ -n "$agent" ] && log=" (see $out/agent.log)"
        echo "verify-agent: no card at $card after ${wait_s}s$log" >&2
        exit 3
    fi
    sleep 1
    waited=$((waited + 1))
done

# shellcheck disable=SC2086  # VERIFY_ARGS is a list of options, split on purpose
"$cli" verify "$url" --junit "$out/junit.xml" --record "$out/record.json" \
    $signature ${VERIFY_ARGS:-} >"$out/report.txt"
status=$?
cat "$out/report.txt"
case $status in
    0) echo "verify-agent: consistent (exit 0)" >&2 ;;
    1) echo "verify-agent: NON-CONFORMANT: answers contradict the declarations, or the card" \
           "signature cannot be checked (exit 1; report.txt says which)" >&2 ;;
    2) echo "verify-agent: usage error (exit 2)" >&2 ;;
    3) echo "verify-agent: unreachable or could not complete (exit 3)" >&2 ;;
    4) echo "verify-agent: the card does not declare the interview (exit 4)" >&2 ;;
esac
exit "$status"
