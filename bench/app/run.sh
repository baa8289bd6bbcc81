#!/usr/bin/env bash
# Measures meshbench's test service against nginx: server CPU per request
# for a leaf, for a front fanning out to two leaves (the CPU of all three
# processes counted), and for nginx serving a file of the same size; the
# leaf's unary gRPC against a minimal grpc-go server (bench/grpcref)
# answering as many bytes, both driven by `meshbench load --grpc`; then
# the app's idle memory. Servers are pinned to CPU 0 and wrk to CPU 1;
# everything listens on 127.0.0.1 and stops by itself.
#   bash bench/app/run.sh              # 5 s per case
#   DURATION=10 CONNS=32 bash bench/app/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
DURATION=${DURATION:-5}
CONNS=${CONNS:-16}
INSTANCES=${INSTANCES:-10}
for tool in nginx wrk taskset curl; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool is needed (apt install $tool)" >&2; exit 1; }
done

TMP=$(mktemp -d /tmp/meshbench-bench-app.XXXXXX)
chmod 755 "$TMP" # nginx's worker may run as nobody
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$TMP"
}
trap cleanup EXIT

echo "building..." >&2
CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$TMP/meshbench" ./cmd/meshbench
CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$TMP/slim" ./bench/app/slim
CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$TMP/grpcref" ./bench/grpcref
BASE=$((20000 + $$ % 20000))
FRONT=$BASE LEAF_A=$((BASE + 1)) LEAF_B=$((BASE + 2)) NGINX=$((BASE + 3))

# start PORT CMD... runs a server on CPU 0 and waits until it answers.
start() {
  local port=$1; shift
  taskset -c 0 "$@" >"$TMP/log.$port" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 200); do
    curl -sf -o /dev/null "http://127.0.0.1:$port/" && return 0
    sleep 0.05
  done
  echo "run.sh: server on port $port did not start:" >&2
  cat "$TMP/log.$port" >&2
  exit 1
}

# ticks PID... sums the processes' user+system CPU in clock ticks.
ticks() {
  local sum=0 pid
  for pid in "$@"; do
    sum=$((sum + $(awk '{print $14 + $15}' "/proc/$pid/stat")))
  done
  echo "$sum"
}

# mem PID FIELD prints a smaps_rollup field (Rss, Pss, Anonymous) in KiB.
mem() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/smaps_rollup"; }
mib() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }

# measure PORT PID... prints "requests µs/request" for a wrk run against PORT.
measure() {
  local port=$1; shift
  taskset -c 1 wrk -t1 -c"$CONNS" -d1s "http://127.0.0.1:$port/" >/dev/null # warm-up
  local t0 t1 out reqs
  t0=$(ticks "$@")
  out=$(taskset -c 1 wrk -t1 -c"$CONNS" -d"${DURATION}s" "http://127.0.0.1:$port/")
  t1=$(ticks "$@")
  reqs=$(awk '/requests in/ {print $1}' <<<"$out")
  if grep -qE 'Non-2xx|Socket errors' <<<"$out"; then echo "run.sh: errors from port $port:" >&2; echo "$out" >&2; exit 1; fi
  awk -v r="$reqs" -v t=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%d %.1f\n", r, t / hz * 1e6 / r }'
}

# measure_grpc PORT PID... prints "requests µs/request" for a gRPC run.
measure_grpc() {
  local port=$1; shift
  taskset -c 1 "$TMP/meshbench" load -q --grpc -c"$CONNS" -d1s "http://127.0.0.1:$port" >/dev/null # warm-up
  local t0 t1 out reqs errs
  t0=$(ticks "$@")
  out=$(taskset -c 1 "$TMP/meshbench" load -q --grpc -c"$CONNS" -d"${DURATION}s" --output json "http://127.0.0.1:$port")
  t1=$(ticks "$@")
  reqs=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["requests"])' <<<"$out")
  errs=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["errors"])' <<<"$out")
  if [ "$errs" != 0 ]; then echo "run.sh: $errs gRPC errors from port $port" >&2; exit 1; fi
  awk -v r="$reqs" -v t=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%d %.1f\n", r, t / hz * 1e6 / r }'
}

APP=("$TMP/meshbench" app --graph bench/app/graph.yaml)
start "$LEAF_A" "${APP[@]}" --service leaf-a --listen "127.0.0.1:$LEAF_A"
PID_A=${PIDS[-1]}
start "$LEAF_B" "${APP[@]}" --service leaf-b --listen "127.0.0.1:$LEAF_B"
PID_B=${PIDS[-1]}
start "$FRONT" "${APP[@]}" --service front --listen "127.0.0.1:$FRONT" \
  --upstream "leaf-a=127.0.0.1:$LEAF_A" --upstream "leaf-b=127.0.0.1:$LEAF_B"
PID_F=${PIDS[-1]}
IDLE_RSS=$(mem "$PID_A" Rss) IDLE_ANON=$(mem "$PID_A" Anonymous)

# nginx serves the leaf's own answer as a file: same bytes, same size.
mkdir -p "$TMP/www" "$TMP/nginx"
curl -sf "http://127.0.0.1:$LEAF_A/" >"$TMP/www/index.html"
cat >"$TMP/nginx/nginx.conf" <<CONF
master_process off;
worker_processes 1;
error_log $TMP/nginx/error.log;
pid $TMP/nginx/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off;
  default_type application/json;
  keepalive_requests 1000000;
  client_body_temp_path $TMP/nginx; proxy_temp_path $TMP/nginx; fastcgi_temp_path $TMP/nginx;
  uwsgi_temp_path $TMP/nginx; scgi_temp_path $TMP/nginx;
  open_file_cache max=10;
  server { listen 127.0.0.1:$NGINX; root $TMP/www; }
}
CONF
start "$NGINX" nginx -p "$TMP/nginx" -c "$TMP/nginx/nginx.conf" -g 'daemon off;'
PID_N=${PIDS[-1]}

echo "measuring..." >&2
read -r N_REQ N_US < <(measure "$NGINX" "$PID_N")
read -r L_REQ L_US < <(measure "$LEAF_A" "$PID_A")
read -r F_REQ F_US < <(measure "$FRONT" "$PID_F" "$PID_A" "$PID_B")
read -r N2_REQ N2_US < <(measure "$NGINX" "$PID_N") # again, to show the drift
GREF=$((BASE + 3 + INSTANCES + 10))
taskset -c 0 "$TMP/grpcref" -listen "127.0.0.1:$GREF" -size "$(wc -c <"$TMP/www/index.html")" >"$TMP/log.$GREF" 2>&1 &
PIDS+=($!)
PID_G=${PIDS[-1]}
sleep 0.3
read -r G_REQ G_US < <(measure_grpc "$GREF" "$PID_G")
read -r LG_REQ LG_US < <(measure_grpc "$LEAF_A" "$PID_A")
LOAD_RSS=$(mem "$PID_A" Rss) F_RSS=$(mem "$PID_F" Rss)

# Memory: one slim build (the app alone), then INSTANCES idle copies of
# the full binary, whose text pages they share (PSS splits them).
SLIM=$((BASE + 4))
start "$SLIM" "$TMP/slim" -graph bench/app/graph.yaml -service leaf-a -listen "127.0.0.1:$SLIM"
SLIM_RSS=$(mem "${PIDS[-1]}" Rss) SLIM_ANON=$(mem "${PIDS[-1]}" Anonymous)
MANY=()
for i in $(seq "$INSTANCES"); do
  start $((BASE + 4 + i)) "${APP[@]}" --service leaf-a --listen "127.0.0.1:$((BASE + 4 + i))"
  MANY+=("${PIDS[-1]}")
done
PSS_SUM=0
for pid in "${MANY[@]}"; do PSS_SUM=$((PSS_SUM + $(mem "$pid" Pss))); done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a / b}'; }
printf 'meshbench app vs %s: servers on CPU 0, wrk -t1 -c%s on CPU 1, %ss per case, %s-byte answers\n' \
  "$(nginx -v 2>&1 | sed 's|.*: ||')" "$CONNS" "$DURATION" "$(wc -c <"$TMP/www/index.html")"
printf '%-50s %10s %12s %9s\n' case requests 'CPU µs/req' 'x nginx'
printf '%-50s %10d %12.1f %9s\n' 'nginx, static file, 1 worker' "$N_REQ" "$N_US" 1.00
printf '%-50s %10d %12.1f %9s\n' 'app leaf' "$L_REQ" "$L_US" "$(ratio "$L_US" "$N_US")"
printf '%-50s %10d %12.1f %9s\n' 'app front + 2 leaves (all 3 processes'"'"' CPU)' "$F_REQ" "$F_US" "$(ratio "$F_US" "$N_US")"
printf '%-50s %10d %12.1f %9s\n' 'nginx again (drift check)' "$N2_REQ" "$N2_US" "$(ratio "$N2_US" "$N_US")"
echo
printf '%-50s %10s %12s %9s\n' 'unary gRPC, meshbench load --grpc on CPU 1' requests 'CPU µs/req' 'x grpc-go'
printf '%-50s %10d %12.1f %9s\n' 'grpc-go server alone (bench/grpcref)' "$G_REQ" "$G_US" 1.00
printf '%-50s %10d %12.1f %9s\n' 'app leaf, gRPC' "$LG_REQ" "$LG_US" "$(ratio "$LG_US" "$G_US")"
echo
echo "memory, MiB                                         RSS   private anon"
printf '%-50s %6s %6s\n' 'bin/meshbench app, idle' "$(mib "$IDLE_RSS")" "$(mib "$IDLE_ANON")"
printf '%-50s %6s\n' 'bin/meshbench app leaf, after load' "$(mib "$LOAD_RSS")"
printf '%-50s %6s\n' 'bin/meshbench app front, after load' "$(mib "$F_RSS")"
printf '%-50s %6s %6s\n' 'app alone (bench/app/slim), idle' "$(mib "$SLIM_RSS")" "$(mib "$SLIM_ANON")"
printf '%-50s %6s   (PSS, text shared)\n' "bin/meshbench app, $INSTANCES idle, per instance" "$(mib $((PSS_SUM / INSTANCES)))"
