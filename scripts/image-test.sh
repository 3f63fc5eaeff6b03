#!/usr/bin/env bash
# Runs billable's container image (scripts/image.sh builds it) with podman and checks it as a
# self-hoster would use it (issue 52):
#
#   scripts/image-test.sh [IMAGE [BINARY]]     default billable:latest, target/release/billable
#
# 1. The image: its config (user, port, volume, HEALTHCHECK kept, OCI labels) and its size
#    beside the binary's (at most 1.25 times).
# 2. SQLite on a volume: the first start's key from the log; a client, an invoice and its PDF,
#    and a team made with the CLI in the container; nothing written outside /data; a second
#    `serve` on the same volume refused; SIGTERM under load drains the requests in flight and
#    exits 0 within the grace period; a new container on the volume has everything
#    acknowledged.
# 3. The machine's PostgreSQL (a fresh database) and Redis (a fresh key prefix), with two
#    containers started together as replicas: one first start, a write on one read on the
#    other, both stop with 0.
#
# Needs podman (deploy/containers.conf), curl, jq, psql and PostgreSQL at IMAGE_TEST_PG
# (default postgres://postgres@127.0.0.1:5432, trust); Redis at IMAGE_TEST_REDIS (default: a
# redis-server of its own on a free port; "off" to leave it out). Removes its containers, volume, database
# and Redis keys on exit; exits non-zero at the first failed check.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
image=${1:-billable:latest}
binary=${2:-$root/target/release/billable}
# Absolute: buildah's copier runs in another directory.
CONTAINERS_CONF=$(realpath "${CONTAINERS_CONF:-$root/deploy/containers.conf}")
export CONTAINERS_CONF
pg_base=${IMAGE_TEST_PG:-postgres://postgres@127.0.0.1:5432}
redis_url=${IMAGE_TEST_REDIS:-}
redis_pid=
grace=10   # podman stop -t: the seconds SIGTERM has before SIGKILL
# The server's own drain (requests in flight, jobs running) ends within podman's grace.
drain=(-e BILLABLE_SHUTDOWN_TIMEOUT=8s)

tag=billable-imgtest-$$-$RANDOM
db=${tag//-/_}
work=$(mktemp -d "${TMPDIR:-/tmp}/$tag.XXXXXX")
containers=()
volumes=()
created_db=
redis_prefix=
t_start=$SECONDS
timings=()

log() { printf '%s\n' "$*"; }
ok() { printf 'ok    %s\n' "$*"; }
fail() {
    printf 'FAIL  %s\n' "$*" >&2
    exit 1
}
phase() {
    local now=$SECONDS
    [[ -n ${phase_name:-} ]] && timings+=("$phase_name: $((now - phase_started)) s")
    phase_name=$1
    phase_started=$now
    [[ -n $1 ]] && log "== $1"
    return 0
}

cleanup() {
    local status=$?
    set +e
    if ((status != 0)); then
        for c in "${containers[@]}"; do
            podman container exists "$c" 2>/dev/null || continue
            echo "--- podman logs $c (last 40 lines)" >&2
            podman logs --tail 40 "$c" >&2 2>&1
        done
    fi
    for c in "${containers[@]}"; do podman rm -f -v -t 0 "$c" >/dev/null 2>&1; done
    for v in "${volumes[@]}"; do podman volume rm -f "$v" >/dev/null 2>&1; done
    if [[ -n $created_db ]]; then
        psql "$pg_base/postgres" -qAtX -c "DROP DATABASE IF EXISTS $created_db WITH (FORCE)" >/dev/null
    fi
    if [[ -n $redis_pid ]]; then
        kill "$redis_pid" 2>/dev/null
        wait "$redis_pid" 2>/dev/null
    elif [[ -n $redis_prefix ]]; then
        redis-cli -u "$redis_url" --scan --pattern "$redis_prefix*" | xargs -r redis-cli -u "$redis_url" del >/dev/null
    fi
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for tool in podman curl jq psql; do
    command -v "$tool" >/dev/null || fail "$tool is missing"
done
podman image exists "$image" || fail "no image $image: build it with scripts/image.sh"

# A TCP port no socket uses, below Linux's ephemeral range (32768 and up), where the local
# end of some outgoing connection could hold it.
free_port() {
    local port
    for _ in $(seq 100); do
        port=$((20000 + RANDOM % 12000))
        if command -v ss >/dev/null; then
            [[ -z $(ss -Htan "sport = :$port") ]] || continue
        elif (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            continue
        fi
        echo "$port"
        return
    done
    fail "no free port"
}

# podman run -d, its stderr kept aside (podman 4.3 logs an error about the HEALTHCHECK's
# systemd timer on machines without systemd; the container runs regardless).
start() {
    local name=$1
    shift
    containers+=("$name")
    podman run -d --name "$name" "$@" >/dev/null 2>"$work/$name.run.err" ||
        fail "podman run $name: $(cat "$work/$name.run.err")"
}

# Waits until URL answers 200, while the container runs.
wait_ready() {
    local container=$1 url=$2 deadline=$((SECONDS + 60))
    until curl -fsS -o /dev/null "$url" 2>/dev/null; do
        [[ $(podman inspect -f '{{.State.Running}}' "$container") == true ]] ||
            fail "$container exited before $url answered: $(podman logs --tail 20 "$container" 2>&1)"
        ((SECONDS < deadline)) || fail "$url did not answer within 60 s"
        sleep 0.2
    done
}

# http METHOD URL [BODY]: sets status and body (the answer's file).
http() {
    local method=$1 url=$2 data=${3:-}
    body=$work/body.$RANDOM
    local args=(-sS -X "$method" -o "$body" -w '%{http_code}' -H "X-API-Key: $key")
    [[ -n $data ]] && args+=(-H 'Content-Type: application/json' -d "$data")
    status=$(curl "${args[@]}" "$url") || fail "$method $url: curl failed"
}
expect() {
    local want=$1 what=$2
    [[ $status == "$want" ]] || fail "$what: $status, not $want: $(head -c 300 "$body")"
}

first_key() {
    local logs
    logs=$(podman logs "$1" 2>&1)
    grep -m1 -o 'X-API-Key: bk_[^[:space:]]*' <<<"$logs" | cut -d' ' -f2 || true
}

# podman stop (SIGTERM, then SIGKILL after the grace): the container must exit 0 within the
# grace, without a panic. ERROR lines logged after the SIGTERM are shown.
stop_clean() {
    local container=$1 started=$SECONDS code logs errors
    podman stop -t "$grace" "$container" >/dev/null 2>"$work/$container.stop.err" ||
        fail "podman stop $container: $(cat "$work/$container.stop.err")"
    code=$(podman inspect -f '{{.State.ExitCode}}' "$container")
    [[ $code == 0 ]] || fail "$container exited with $code after SIGTERM (137: killed after the $grace s grace)"
    ((SECONDS - started < grace)) || fail "$container took $((SECONDS - started)) s to stop"
    logs=$(podman logs "$container" 2>&1 | sed 's/\x1b\[[0-9;]*m//g')
    [[ $logs != *panicked* ]] || fail "$container panicked: $(grep -m3 panicked <<<"$logs")"
    local t0 t1 server=""
    t0=$(grep -m1 'SIGTERM received' <<<"$logs" | cut -d' ' -f1 || true)
    t1=$(grep 'app: stopped' <<<"$logs" | tail -1 | cut -d' ' -f1 || true)
    if [[ -n $t0 && -n $t1 ]]; then
        server=" (the server: $((($(date -d "$t1" +%s%N) - $(date -d "$t0" +%s%N)) / 1000000)) ms from SIGTERM to \"stopped\")"
    fi
    ok "$container stopped on SIGTERM with 0 in $((SECONDS - started)) s$server"
    errors=$(sed -n '/SIGTERM received/,$p' <<<"$logs" | grep ' ERROR ' || true)
    [[ -z $errors ]] || log "note  logged while stopping: ${errors//$'\n'/$'\n      '}"
    return 0
}

#######################################################################################
phase "the image"
inspect() { podman image inspect -f "$1" "$image"; }
version=$(awk '/^\[/ { w = ($0 == "[workspace.package]") } w && $1 == "version" { gsub(/"/, "", $3); print $3; exit }' "$root/Cargo.toml")
license=$(awk '/^\[/ { w = ($0 == "[workspace.package]") } w && $1 == "license" { gsub(/"/, "", $3); print $3; exit }' "$root/Cargo.toml")
[[ $(inspect '{{.Config.User}}') == 10001:10001 ]] || fail "user: $(inspect '{{.Config.User}}')"
[[ $(inspect '{{json .Config.ExposedPorts}}') == '{"8080/tcp":{}}' ]] || fail "exposed: $(inspect '{{json .Config.ExposedPorts}}')"
[[ $(inspect '{{json .Config.Volumes}}') == '{"/data":{}}' ]] || fail "volumes: $(inspect '{{json .Config.Volumes}}')"
[[ $(inspect '{{json .Config.Healthcheck.Test}}') == '["CMD","/usr/local/bin/billable","healthcheck"]' ]] ||
    fail "HEALTHCHECK not kept (build with --format docker): $(inspect '{{json .Config.Healthcheck}}')"
[[ $(inspect '{{index .Config.Labels "org.opencontainers.image.version"}}') == "$version" ]] || fail "label version"
[[ $(inspect '{{index .Config.Labels "org.opencontainers.image.licenses"}}') == "$license" ]] || fail "label licenses"
for label in title created; do
    [[ -n $(inspect "{{index .Config.Labels \"org.opencontainers.image.$label\"}}") ]] || fail "no label $label"
done
ok "user 10001, EXPOSE 8080, VOLUME /data, HEALTHCHECK kept, labels version $version and licenses $license"
image_size=$(inspect '{{.Size}}')
if [[ -f $binary ]]; then
    binary_size=$(stat -c %s "$binary")
    awk -v i="$image_size" -v b="$binary_size" 'BEGIN { exit !(i <= 1.25 * b) }' ||
        fail "image $image_size bytes is over 1.25 times the binary's $binary_size"
    ok "image $image_size bytes, $(awk -v i="$image_size" -v b="$binary_size" 'BEGIN { printf "%.3f", i / b }') times the binary's $binary_size"
else
    log "skip  size beside the binary: no $binary"
fi
if podman run --rm "$image" help healthcheck >/dev/null 2>&1; then has_healthcheck=1; else has_healthcheck=; fi

#######################################################################################
phase "SQLite on a volume"
volume=$tag-data
podman volume create "$volume" >/dev/null
volumes+=("$volume")
port=$(free_port)
base=http://127.0.0.1:$port
first=$tag-sqlite-1
# The load below would meet the rate limits (100 per key in 10 s, 60 public PDFs per IP in 60 s).
limits=(-e BILLABLE_RATE_LIMIT=100000/1s -e BILLABLE_IP_RATE_LIMIT=100000/1s "${drain[@]}")
start "$first" -p "127.0.0.1:$port:8080" -v "$volume:/data" "${limits[@]}" "$image"
wait_ready "$first" "$base/healthz"
curl -fsS "$base/readyz" >/dev/null || fail "/readyz"
ok "/healthz and /readyz answer on $base"
key=$(first_key "$first")
[[ $key == bk_* ]] || fail "no first-start key in the log"
ok "first-start key read from podman logs"

pid=$(podman inspect -f '{{.State.Pid}}' "$first")
[[ $(stat -c %u "/proc/$pid") == 10001 ]] || fail "the server runs as uid $(stat -c %u "/proc/$pid")"
mountpoint=$(podman volume inspect -f '{{.Mountpoint}}' "$volume")
[[ -f $mountpoint/billable.db && $(stat -c %u "$mountpoint/billable.db") == 10001 ]] ||
    fail "no billable.db of uid 10001 in the volume: $(ls -ln "$mountpoint")"
ok "runs as uid 10001; the volume holds: $(cd "$mountpoint" && echo *)"

# A team made with the CLI inside the container, beside the server (SQLite allows it).
podman exec "$first" billable teams create --name "Acme GmbH" --currency EUR >/dev/null
podman exec "$first" billable users create --team "Acme GmbH" --email owner@acme.example --role owner >/dev/null
acme_key=$(podman exec "$first" billable keys create --team "Acme GmbH" --user owner@acme.example --scope write | grep -m1 -o 'bk_[^[:space:]]*')
[[ $acme_key == bk_* ]] || fail "keys create printed no key"
ok "team, owner and key made with podman exec billable ..."

key=$acme_key
http POST "$base/v1/invoices/clients" '{"name": "Zoë Łukasiewicz", "email": "zoe@example.com", "line1": "Οδός Ερμού 1", "postalCode": "105 63"}'
expect 201 "POST /v1/invoices/clients"
client=$(jq -r .id "$body")
http POST "$base/v1/invoices" "{\"clientId\": \"$client\", \"taxPercentage\": 19, \"dueDate\": \"2030-12-20\",
  \"lineItems\": [{\"description\": \"Design\", \"unitPrice\": 100, \"quantity\": 1},
                  {\"description\": \"Hosting 東京\", \"unitPrice\": 0.5, \"quantity\": 3}]}"
expect 201 "POST /v1/invoices"
invoice=$(jq -r .id "$body")
serial=$(jq -r .serial "$body")
total=$(jq -r .total "$body")
[[ $serial == INV-0001 && $total == 120.79 ]] || fail "invoice $serial total $total, not INV-0001 120.79"
http GET "$base/v1/invoices/pdf?id=$invoice"
expect 200 "GET /v1/invoices/pdf"
[[ $(head -c 5 "$body") == %PDF- ]] || fail "the PDF is no PDF"
cp "$body" "$work/first.pdf"
ok "client, invoice $serial ($total EUR) and its PDF ($(stat -c %s "$body") bytes; a line in CJK, which no font in the image has)"

# podman's own mount points (/etc/hosts, /etc/hostname, /etc/resolv.conf) change /etc.
changes=$(podman diff "$first" | grep -Ev '^C /etc$|^A /etc/(hosts|hostname|resolv\.conf)$|^A /run(/|$)' || true)
[[ -z $changes ]] || fail "the container wrote outside its volume: $changes"
ok "podman diff: nothing written outside /data"

if [[ -n $has_healthcheck ]]; then
    podman healthcheck run "$first" >/dev/null 2>&1 || fail "podman healthcheck run: unhealthy"
    ok "podman healthcheck run: healthy"
else
    # The HEALTHCHECK runs (and fails: billable answers "unrecognized subcommand").
    ! podman healthcheck run "$first" >/dev/null 2>&1 || fail "podman healthcheck run passed without the subcommand"
    log "skip  podman healthcheck run: the binary has no healthcheck subcommand yet (unhealthy until it has)"
fi

# SIGTERM while requests are in flight: four clients, two writing, two fetching the PDF,
# each sending one request after another until a connection is refused. Every request
# either completes or is refused its connection (the listener closed); none is cut off
# mid-answer, and every write acknowledged must be there after the restart.
load() {
    local stream=$1 n=0 rc code
    while ((n < 2000)); do
        n=$((n + 1))
        local out=$work/load/$stream.$n
        rc=0
        if ((stream < 2)); then
            code=$(curl -sS -o "$out.body" -w '%{http_code}' -X POST "$base/v1/invoices/clients" \
                -H "X-API-Key: $key" -H 'Content-Type: application/json' \
                -d "{\"name\": \"Load $stream.$n\", \"email\": \"load$stream.$n@example.com\", \"line1\": \"x\", \"postalCode\": \"1\"}" \
                2>"$out.err") || rc=$?
        else
            code=$(curl -sS -o "$out.body" -w '%{http_code}' "$base/v1/invoices/pdf?id=$invoice" 2>"$out.err") || rc=$?
        fi
        echo "$rc $code" >"$out.result"
        ((rc == 7)) && break
    done
    return 0
}
mkdir "$work/load"
loaders=()
for stream in 0 1 2 3; do
    load "$stream" &
    loaders+=($!)
done
sleep 1
stop_clean "$first"
for pid in "${loaders[@]}"; do wait "$pid"; done
acknowledged=()
reset_names=()
completed=0 refused=0
for result in "$work"/load/*.result; do
    read -r rc code <"$result"
    out=${result%.result}
    name=${out##*/}
    if ((rc == 0)) && [[ $code == 201 || $code == 200 ]]; then
        completed=$((completed + 1))
        [[ $code == 201 ]] && acknowledged+=("$(jq -r .id "$out.body")")
    elif ((rc == 7)); then
        refused=$((refused + 1))
    elif ((rc == 52 || rc == 56)); then
        # Reset or closed without an answer: the request met the SIGTERM in the listen
        # backlog or between accept and the workers' stop. Nothing was acknowledged; whether
        # a write happened is looked up below.
        reset_names+=("$name")
    else
        fail "request $name in flight at SIGTERM: curl exit $rc, HTTP $code: $(cat "$out.err")"
    fi
done
((refused == 4)) || fail "$refused of the 4 load streams saw the listener close"
ok "SIGTERM under load: $completed requests completed (${#acknowledged[@]} writes acknowledged), then each stream's next connection refused"

second=$tag-sqlite-2
start "$second" -p "127.0.0.1:$port:8080" -v "$volume:/data" "${limits[@]}" "$image"
wait_ready "$second" "$base/readyz"
[[ $(podman logs "$second" 2>&1) != *"First start"* ]] || fail "the new container started afresh"
http GET "$base/v1/invoices/$invoice"
expect 200 "GET the invoice from the new container"
[[ $(jq -r .serial "$body") == "$serial" && $(jq -r .total "$body") == "$total" ]] || fail "the invoice changed: $(cat "$body")"
for id in "${acknowledged[@]}"; do
    http GET "$base/v1/invoices/clients/$id"
    expect 200 "client $id acknowledged before SIGTERM"
done
http GET "$base/v1/invoices/pdf?id=$invoice"
expect 200 "the PDF from the new container"
ok "a new container on the volume has the invoice and all ${#acknowledged[@]} acknowledged writes"
if ((${#reset_names[@]})); then
    http GET "$base/v1/invoices/clients"
    expect 200 "GET /v1/invoices/clients"
    for name in "${reset_names[@]}"; do
        stream=${name%%.*}
        if ((stream < 2)); then
            applied=$(jq --arg n "Load $name" '[.[] | select(.name == $n)] | length' "$body")
            log "note  request $name (a write) was reset by the SIGTERM, not answered; written: $applied"
        else
            log "note  request $name (a PDF) was reset by the SIGTERM, not answered"
        fi
    done
fi

# The first start's key for team Default still works.
key=$(first_key "$first")
http GET "$base/v1/team"
expect 200 "GET /v1/team with the first start's key"
key=$acme_key

# A second server on the same SQLite file is refused.
containers+=("$tag-sqlite-3")
if out=$(timeout 60 podman run --name "$tag-sqlite-3" -v "$volume:/data" "$image" 2>&1); then
    fail "a second serve on the same volume ran"
fi
# shellcheck disable=SC2016 # the backquotes are the message's own
grep -q 'another `billable serve` is serving' <<<"$out" || fail "a second serve failed otherwise: $out"
ok "a second serve on the same volume is refused"
stop_clean "$second"

#######################################################################################
phase "PostgreSQL, two replicas"
psql "$pg_base/postgres" -qAtX -v ON_ERROR_STOP=1 -c "CREATE DATABASE $db" >/dev/null
created_db=$db
env=(-e "DATABASE_URL=$pg_base/$db" "${drain[@]}")
if [[ -z $redis_url ]]; then
    command -v redis-server >/dev/null || fail "redis-server is missing (IMAGE_TEST_REDIS=off leaves Redis out)"
    redis_port=$(free_port)
    redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no >"$work/redis.log" 2>&1 &
    redis_pid=$!
    redis_url=redis://127.0.0.1:$redis_port
    for _ in $(seq 50); do
        [[ $(redis-cli -u "$redis_url" ping 2>/dev/null) == PONG ]] && break
        sleep 0.1
    done
fi
if [[ $redis_url != off ]]; then
    command -v redis-cli >/dev/null || fail "redis-cli is missing (IMAGE_TEST_REDIS=off leaves Redis out)"
    [[ $(redis-cli -u "$redis_url" ping) == PONG ]] || fail "no Redis at $redis_url (IMAGE_TEST_REDIS=off leaves it out)"
    redis_prefix=$tag:
    env+=(-e "BILLABLE_REDIS_URL=$redis_url" -e "BILLABLE_REDIS_PREFIX=$redis_prefix")
fi
ports=("$(free_port)" "$(free_port)")
[[ ${ports[0]} != "${ports[1]}" ]] || ports[1]=$(free_port)
replicas=("$tag-pg-1" "$tag-pg-2")
# Started together on the empty database: both migrate and bootstrap at once.
for i in 0 1; do
    start "${replicas[i]}" --network host "${env[@]}" -e "BILLABLE_LISTEN=127.0.0.1:${ports[i]}" "$image"
done
for i in 0 1; do wait_ready "${replicas[i]}" "http://127.0.0.1:${ports[i]}/readyz"; done
ok "both replicas ready on ports ${ports[*]} (database $db${redis_prefix:+, Redis prefix $redis_prefix})"
keys=()
for r in "${replicas[@]}"; do
    k=$(first_key "$r")
    [[ -n $k ]] && keys+=("$k")
done
((${#keys[@]} == 1)) || fail "${#keys[@]} first starts among the replicas, not 1"
key=${keys[0]}
teams=$(psql "$pg_base/$db" -qAtX -c 'SELECT count(*) FROM teams' 2>/dev/null || echo '?')
ok "one first start between the two (teams in the database: $teams)"

a=http://127.0.0.1:${ports[0]}
b=http://127.0.0.1:${ports[1]}
http POST "$a/v1/invoices/clients" '{"name": "Acme GmbH", "email": "billing@acme.example", "line1": "Hauptstraße 1", "postalCode": "10115"}'
expect 201 "POST client on replica 1"
client=$(jq -r .id "$body")
http POST "$b/v1/invoices" "{\"clientId\": \"$client\", \"taxPercentage\": 19, \"lineItems\": [{\"description\": \"Design\", \"unitPrice\": 100, \"quantity\": 1}]}"
expect 201 "POST invoice on replica 2 for replica 1's client"
invoice=$(jq -r .id "$body")
http GET "$a/v1/invoices/$invoice"
expect 200 "GET replica 2's invoice on replica 1"
[[ $(jq -r .total "$body") == 119.00 || $(jq -r .total "$body") == 119 ]] || fail "total $(jq -r .total "$body")"
for url in "$a" "$b"; do
    http GET "$url/v1/invoices/pdf?id=$invoice"
    expect 200 "PDF from $url"
    [[ $(head -c 5 "$body") == %PDF- ]] || fail "no PDF from $url"
done
ok "client on one replica, invoice on the other, read and rendered on both"
if [[ -n $has_healthcheck ]]; then
    for r in "${replicas[@]}"; do podman healthcheck run "$r" >/dev/null 2>&1 || fail "$r unhealthy"; done
    ok "podman healthcheck run: both healthy"
fi
for r in "${replicas[@]}"; do stop_clean "$r"; done

phase ""
log "== passed in $((SECONDS - t_start)) s (${timings[*]/%/;})"
