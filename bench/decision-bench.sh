#!/usr/bin/env bash
# Cost of recording decisions: POST /v1/route with and without transaction_id, beside the
# bare uWebSockets.js ceiling, interleaved, wrk pinned to CPU 0 and servers to CPU 1.
# Prints per run: req/s, server and wrk CPU µs per request; then the medians of the same-run
# ratios. Usage: npm run build && bash bench/decision-bench.sh [rounds=3] [seconds=8]
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-3}; SECS=${2:-8}; CONNS=50
DATA=$(mktemp -d); LUA=$(mktemp -d)
cleanup() { kill "${SRV:-}" "${BARE:-}" 2>/dev/null || true; rm -rf "$DATA" "$LUA"; }
trap cleanup EXIT
cpu_ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)

PORT=18491 BARE_PORT=18492
SERVICE_DATA_DIR=$DATA SERVICE_TIER=3 SERVICE_LOG_LEVEL=warn PORT=$PORT HOST=127.0.0.1 taskset -c 1 node dist/src/main.js & SRV=$!
BODY='{"processor_id":"stripe","weight":0.9,"fallback_processor_id":"adyen","decision_source":"mab","failure_probability":0.0123,"rule_id":"bench_rule"}'
BARE_BODY=$BODY PORT=$BARE_PORT taskset -c 1 node dist/bench/bare-uws.js >/dev/null & BARE=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/" >/dev/null && break; sleep 0.1; done
curl -sf -XPOST "http://127.0.0.1:$PORT/v1/rules" -H 'content-type: application/json' \
  -d '{"rule_id":"bench_rule","attributes":["US","USD","card"],"primary_id":"stripe","secondary_id":"adyen"}' >/dev/null

cat > "$LUA/plain.lua" <<'L'
wrk.method = "POST"; wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"country":"US","currency":"USD","payment_method":"card","amount":25.5}'
L
cat > "$LUA/txid.lua" <<'L'
wrk.method = "POST"; wrk.headers["Content-Type"] = "application/json"
local n = 0
local prefix = "tx" .. tostring(math.random(1, 1e9)) .. "_"
request = function()
  n = n + 1
  return wrk.format(nil, nil, nil, '{"country":"US","currency":"USD","payment_method":"card","amount":25.5,"transaction_id":"' .. prefix .. n .. '"}')
end
L

run() { # name port script pid → "rps srv_us_per_req wrk_us_per_req"
  local s0 w_out rps s1 wt
  s0=$(cpu_ticks "$4")
  w_out=$( { /usr/bin/time -f 'WRKCPU %U %S' taskset -c 0 wrk -t1 -c$CONNS -d${SECS}s -s "$3" "http://127.0.0.1:$2/v1/route"; } 2>&1 )
  s1=$(cpu_ticks "$4")
  rps=$(echo "$w_out" | awk '/Requests\/sec/ {print $2}')
  wt=$(echo "$w_out" | awk '/WRKCPU/ {print $2+$3}')
  awk -v r="$rps" -v s="$((s1 - s0))" -v hz="$HZ" -v w="$wt" -v d="$SECS" \
    'BEGIN { n = r * d; printf "%.0f %.2f %.2f\n", r, s / hz * 1e6 / n, w * 1e6 / n }'
}
echo "round  bare_rps  plain_rps  txid_rps  | srv_us/req plain txid | wrk_us/req plain txid | plain/bare txid/bare txid/plain"
RATIOS=$(mktemp)
for r in $(seq "$ROUNDS"); do
  read -r b _ _ <<<"$(run bare $BARE_PORT "$LUA/plain.lua" $BARE)"
  read -r p ps pw <<<"$(run plain $PORT "$LUA/plain.lua" $SRV)"
  read -r t ts tw <<<"$(run txid $PORT "$LUA/txid.lua" $SRV)"
  line=$(awk -v b="$b" -v p="$p" -v t="$t" 'BEGIN {printf "%.3f %.3f %.3f", p/b, t/b, t/p}')
  echo "$line" >> "$RATIOS"
  echo "$r  $b  $p  $t  | $ps $ts | $pw $tw | $line"
done
echo "median txid/plain: $(awk '{print $3}' "$RATIOS" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')" \
     " median plain/bare: $(awk '{print $1}' "$RATIOS" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')" \
     " median txid/bare: $(awk '{print $2}' "$RATIOS" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
rm -f "$RATIOS"
