#!/usr/bin/env bash
# Single-node Apache Kafka clusters (KRaft, broker and controller in one JVM) on loopback, for the
# tests, the benchmarks and people. The jars come from scripts/install-deps.sh.
#
#   scripts/kafka.sh start NAME PORT [--protocol PLAINTEXT|SASL_PLAINTEXT|SSL|SASL_SSL]
#                    [--user NAME:PASSWORD]... [--acl] [--set key=value]...
#                    [--advertise-port PORT2]
#       Formats (first start) and starts cluster NAME with its client listener on 127.0.0.1:PORT,
#       returns once it answers there, and prints one line:
#           NAME bootstrap=127.0.0.1:PORT pid=PID dir=DIR
#       SSL/SASL_SSL: the CA certificate is DIR/ca.pem (the broker's certificate names localhost
#       and 127.0.0.1). Users get SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN credentials. --acl turns
#       on the StandardAuthorizer (no ACL = denied) with the first user as super user (SASL only:
#       PLAINTEXT and SSL clients are ANONYMOUS, which the broker needs as a super user). --set adds
#       a server.properties line (last one wins), e.g. --set log.retention.ms=3600000.
#       --advertise-port tells clients to connect to PORT2 instead (a proxy in front of PORT).
#       PORT 0 picks a free port. A NAME that is already running (on PORT, or on any port with
#       PORT 0) is left as it is and its line printed again: concurrent starts of one NAME start
#       one broker (tests share clusters this way).
#   scripts/kafka.sh stop NAME      SIGTERM, wait for a clean shutdown, delete DIR
#   scripts/kafka.sh kill NAME      SIGKILL; DIR (and the log) stay for `restart`
#   scripts/kafka.sh restart NAME   start a stopped or killed NAME again on its log, wait until ready
#   scripts/kafka.sh freeze NAME    SIGSTOP: the broker hangs with its sockets open
#   scripts/kafka.sh thaw NAME      SIGCONT
#   scripts/kafka.sh libs           print the folder that holds the jars (broker, tools, MM2)
#
# Env: KREPLICATE_KAFKA_HOME (default REPO/.cache/kafka/run) holds one DIR per NAME;
#      KREPLICATE_KAFKA_LIBS overrides the jar folder; KAFKA_HEAP_OPTS the JVM's heap flags;
#      KREPLICATE_KAFKA_JVM_OPTS more JVM flags for the broker (the tests: -XX:TieredStopAtLevel=1);
#      KREPLICATE_KAFKA_START_TIMEOUT seconds to wait for a start (default 60).
# Exit codes: 0 done; 1 the broker did not start (its log's tail is printed); 2 bad usage.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# One pin for the version: the pom install-deps.sh fetches from.
KAFKA_VERSION="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$REPO/scripts/kafka/pom.xml")"
LIBS="${KREPLICATE_KAFKA_LIBS:-$REPO/.cache/kafka/$KAFKA_VERSION/libs}"
HOME_DIR="${KREPLICATE_KAFKA_HOME:-$REPO/.cache/kafka/run}"
START_TIMEOUT="${KREPLICATE_KAFKA_START_TIMEOUT:-60}"

usage() { sed -n '4,24p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
die() { echo "kafka.sh: $1" >&2; exit "${2:-1}"; }

need_libs() {
    [ -f "$LIBS/.complete" ] || die "no Kafka jars at $LIBS: run scripts/install-deps.sh" 1
}

alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# free_ports N AVOID...: N distinct free ports, none of AVOID. Bound together: two free_port
# calls in a row can print the same port, and Kafka refuses two listeners on one port.
free_ports() {
    python3 -c '
import socket, sys
n, avoid, held, out = int(sys.argv[1]), set(sys.argv[2:]), [], []
while len(out) < n:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); held.append(s)
    p = str(s.getsockname()[1])
    if p not in avoid: out.append(p)
print(" ".join(out))' "$@"
}

# The broker logs this once it is RUNNING: unfenced, its listeners accepting, the authorizer ready.
started() { grep -q "Kafka Server started" "$1/server.log" 2>/dev/null; }

jaas_plain() { # server-side PLAIN entry holding every user's password
    local line="org.apache.kafka.common.security.plain.PlainLoginModule required"
    local u
    for u in "${USERS[@]}"; do line+=" user_${u%%:*}=\"${u#*:}\""; done
    echo "$line;"
}

make_tls() { # a CA and a broker certificate for localhost/127.0.0.1, as PEM files
    local d="$1"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=kreplicate-test-ca" \
        -keyout "$d/ca.key" -out "$d/ca.pem" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
        -keyout "$d/broker.key.pem" -out "$d/broker.csr" 2>/dev/null
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >"$d/san.ext"
    openssl x509 -req -in "$d/broker.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial \
        -days 3650 -extfile "$d/san.ext" -out "$d/broker.crt" 2>/dev/null
    # Kafka's PEM keystore: unencrypted PKCS#8 key and the chain in one file.
    openssl pkcs8 -topk8 -nocrypt -in "$d/broker.key.pem" -out "$d/broker.key" 2>/dev/null
    cat "$d/broker.key" "$d/broker.crt" "$d/ca.pem" >"$d/keystore.pem"
    rm -f "$d/broker.csr" "$d/san.ext" "$d/ca.srl" "$d/broker.key.pem"
}

write_config() {
    local dir="$1" port="$2" proto="$3" acl="$4" aport="${5:-$2}"
    local cport iport
    read -r cport iport < <(free_ports 2 "$port" "$aport")
    local lname=${proto,,}
    {
        echo "process.roles=broker,controller"
        echo "node.id=1"
        echo "controller.quorum.voters=1@127.0.0.1:$cport"
        # The client listener speaks PROTO; the controller and the broker's own connections use
        # loopback PLAINTEXT listeners of their own, so only the client listener needs credentials.
        echo "listeners=$proto://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport,INTERNAL://127.0.0.1:$iport"
        echo "advertised.listeners=$proto://127.0.0.1:$aport,INTERNAL://127.0.0.1:$iport"
        echo "inter.broker.listener.name=INTERNAL"
        echo "controller.listener.names=CONTROLLER"
        echo "listener.security.protocol.map=CONTROLLER:PLAINTEXT,INTERNAL:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL"
        echo "log.dirs=$dir/data"
        # One node: the internal topics cannot have three replicas.
        echo "offsets.topic.replication.factor=1"
        echo "offsets.topic.num.partitions=1"
        echo "transaction.state.log.replication.factor=1"
        echo "transaction.state.log.min.isr=1"
        echo "transaction.state.log.num.partitions=1"
        echo "share.coordinator.state.topic.replication.factor=1"
        echo "share.coordinator.state.topic.min.isr=1"
        echo "group.initial.rebalance.delay.ms=0"
        echo "num.network.threads=2"
        echo "num.io.threads=2"
        echo "log.cleaner.dedupe.buffer.size=16777216"
        # broker.session.timeout.ms stays at 9 s: a killed broker's restart waits that long for its
        # old registration to expire (DUPLICATE_BROKER_REGISTRATION until then).
        echo "auto.create.topics.enable=false"
        if [[ $proto == SASL_* ]]; then
            echo "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512"
            echo "listener.name.$lname.plain.sasl.jaas.config=$(jaas_plain)"
            echo "listener.name.$lname.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;"
            echo "listener.name.$lname.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;"
        fi
        if [[ $proto == *SSL ]]; then
            echo "ssl.keystore.type=PEM"
            echo "ssl.keystore.location=$dir/keystore.pem"
            echo "ssl.client.auth=none"
        fi
        if [ "$acl" = 1 ]; then
            echo "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer"
            echo "allow.everyone.if.no.acl.found=false"
            # The broker reaches its controller and itself over PLAINTEXT loopback listeners as
            # ANONYMOUS: without it as a super user the broker never registers.
            echo "super.users=User:ANONYMOUS;User:${USERS[0]%%:*}"
        fi
        local kv
        for kv in "${SETS[@]}"; do echo "$kv"; done
    } >"$dir/server.properties"
    cat >"$dir/log4j2.properties" <<EOF
status = error
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = $dir/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.org.name = org.apache.kafka
logger.org.level = INFO
logger.zk.name = state.change.logger
logger.zk.level = WARN
EOF
}

launch() { # start the JVM for DIR in its own session, detached from this shell
    local dir="$1"
    : >"$dir/server.log"
    # shellcheck disable=SC2086
    setsid java ${KAFKA_HEAP_OPTS:--Xmx512m -Xms512m} -XX:+UseG1GC ${KREPLICATE_KAFKA_JVM_OPTS:-} -Djava.awt.headless=true \
        -Dlog4j2.configurationFile="$dir/log4j2.properties" -cp "$LIBS/*" \
        kafka.Kafka "$dir/server.properties" >"$dir/stdout.log" 2>&1 </dev/null 9>&- &
    echo $! >"$dir/pid"
}

# A port picked by free_port can be taken by another process before the broker binds it.
bind_failed() { grep -qs "Address already in use" "$1/server.log" "$1/stdout.log"; }

wait_ready() { # [--rebind-ok]: return 3 (nothing printed) when the broker could not bind a port
    local dir="$1" name="$2" rebind="${3:-}" port pid
    port=$(cat "$dir/port")
    pid=$(cat "$dir/pid")
    local deadline=$((SECONDS + START_TIMEOUT))
    while :; do
        if ! alive "$pid"; then
            [ -z "$rebind" ] || ! bind_failed "$dir" || return 3
            tail -n 30 "$dir/server.log" "$dir/stdout.log" >&2 || true
            die "$name: the broker exited during start-up (logs above, in $dir)"
        fi
        if started "$dir" && port_open "$port"; then break; fi
        if ((SECONDS >= deadline)); then
            tail -n 30 "$dir/server.log" >&2 || true
            # Nobody would ever stop a broker whose start failed: it must not outlive the call.
            kill -KILL "$pid" 2>/dev/null || true
            die "$name: not ready on 127.0.0.1:$port after ${START_TIMEOUT}s (log above, in $dir)"
        fi
        sleep 0.1
    done
    echo "$name bootstrap=127.0.0.1:$port pid=$pid dir=$dir"
}

cmd_start() {
    (($# >= 2)) || usage
    local name="$1" port="$2"
    shift 2
    [[ $name =~ ^[A-Za-z0-9._-]+$ ]] || die "NAME must be letters, digits, '.', '_' or '-': '$name'" 2
    [[ $port =~ ^[0-9]+$ ]] || die "PORT must be a number: '$port'" 2
    local proto=PLAINTEXT acl=0 aport=""
    USERS=()
    SETS=()
    while (($#)); do
        case "$1" in
        --protocol) proto="${2:-}"; shift 2 || usage ;;
        --user) USERS+=("${2:-}"); shift 2 || usage ;;
        --acl) acl=1; shift ;;
        --set) SETS+=("${2:-}"); shift 2 || usage ;;
        --advertise-port) aport="${2:-}"; shift 2 || usage ;;
        *) die "unknown option '$1' (see scripts/kafka.sh with no arguments)" 2 ;;
        esac
    done
    case "$proto" in PLAINTEXT | SASL_PLAINTEXT | SSL | SASL_SSL) ;; *) die "unknown --protocol '$proto'" 2 ;; esac
    local u user_re='^[A-Za-z0-9._-]+:[^],"]+$'
    for u in "${USERS[@]}"; do
        [[ $u =~ $user_re ]] || die "--user takes NAME:PASSWORD (no ',', ']' or '\"' in the password): '$u'" 2
    done
    [[ $proto != SASL_* ]] || ((${#USERS[@]})) || die "--protocol $proto needs at least one --user" 2
    [ "$acl" = 0 ] || ((${#USERS[@]})) || die "--acl needs a --user (the super user)" 2
    # PLAINTEXT and SSL clients are User:ANONYMOUS, the principal the broker itself needs as a
    # super user on its loopback listeners: ACLs would allow them everything.
    [ "$acl" = 0 ] || [[ $proto == SASL_* ]] || die "--acl needs --protocol SASL_PLAINTEXT or SASL_SSL" 2
    local kv
    for kv in "${SETS[@]}"; do [[ $kv == ?*=* ]] || die "--set takes key=value: '$kv'" 2; done
    need_libs

    local dir="$HOME_DIR/$name"
    mkdir -p "$HOME_DIR"
    exec 9>"$HOME_DIR/.$name.lock"
    flock 9
    if [ -f "$dir/pid" ] && alive "$(cat "$dir/pid")"; then
        [ "$port" = 0 ] || [ "$(cat "$dir/port")" = "$port" ] \
            || die "$name is already running on port $(cat "$dir/port")" 2
        wait_ready "$dir" "$name"
        return
    fi
    local given_port="$port"
    [ "$port" != 0 ] || port=$(free_port)
    rm -rf "$dir"
    mkdir -p "$dir/data"
    echo "$port" >"$dir/port"
    [[ $proto != *SSL ]] || make_tls "$dir"
    write_config "$dir" "$port" "$proto" "$acl" "${aport:-$port}"
    local id scram=()
    id=$(uuid)
    for u in "${USERS[@]}"; do
        scram+=(--add-scram "SCRAM-SHA-256=[name=${u%%:*},password=${u#*:}]")
        scram+=(--add-scram "SCRAM-SHA-512=[name=${u%%:*},password=${u#*:}]")
    done
    format "$dir" "$id" "${scram[@]}" || die "$name: formatting $dir failed"
    local attempt rc
    for attempt in 1 2 3; do
        launch "$dir"
        rc=0
        wait_ready "$dir" "$name" --rebind-ok || rc=$?
        ((rc == 3)) || return "$rc"
        # Another process took a port between free_port and the bind: new ports, same log.
        echo "kafka.sh: $name: a port was taken during start-up (attempt $attempt), picking others" >&2
        [ "$given_port" != 0 ] || { port=$(free_port); echo "$port" >"$dir/port"; }
        write_config "$dir" "$port" "$proto" "$acl" "${aport:-$port}"
    done
    wait_ready "$dir" "$name"
}

# A random Kafka Uuid (16 bytes, base64url); one that starts with '-' would read as an option.
uuid() {
    local id=-
    while [[ $id == -* ]]; do id=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '='); done
    echo "$id"
}

# Formats DIR/data as cluster ID. The format tool is a JVM start of its own (about 5 CPU
# seconds), so its output is kept per Kafka version, user set and --set lines (what it writes
# besides the ids: the metadata version and the SCRAM credentials) and copied with fresh ids.
format() {
    local dir="$1" id="$2"
    shift 2
    local key tpl
    key=$(printf '%s\n' "$LIBS" "$@" "${SETS[@]}" | sha256sum | cut -c1-16)
    tpl="$HOME_DIR/.formatted-$key"
    if [ ! -f "$tpl/meta.properties" ]; then
        java -Xmx256m -XX:TieredStopAtLevel=1 -Dlog4j2.configurationFile="$dir/log4j2.properties" -cp "$LIBS/*" \
            kafka.tools.StorageTool format -t "$id" -c "$dir/server.properties" "$@" \
            >"$dir/format.log" 2>&1 || { cat "$dir/format.log" >&2; return 1; }
        # Published whole or not at all: concurrent starts may race to publish the same one.
        local tmp
        tmp=$(mktemp -d "$HOME_DIR/.formatting.XXXXXX")
        cp -a "$dir/data/." "$tmp/"
        mv -T "$tmp" "$tpl" 2>/dev/null || rm -rf "$tmp"
        return 0
    fi
    cp -a "$tpl/." "$dir/data/"
    sed -i -e "s/^cluster\.id=.*/cluster.id=$id/" -e "s/^directory\.id=.*/directory.id=$(uuid)/" \
        "$dir/data/meta.properties"
}

dir_of() {
    local dir="$HOME_DIR/${1:-}"
    [ -n "${1:-}" ] && [ -f "$dir/pid" ] || die "no cluster '${1:-}' under $HOME_DIR" 2
    echo "$dir"
}

cmd_stop() {
    local dir pid
    dir=$(dir_of "$@")
    pid=$(cat "$dir/pid")
    if alive "$pid"; then
        kill -CONT "$pid" 2>/dev/null || true
        kill -TERM "$pid" 2>/dev/null || true
        local deadline=$((SECONDS + 30))
        while alive "$pid" && ((SECONDS < deadline)); do sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -rf "$dir" "$HOME_DIR/.$1.lock"
}

cmd_kill() {
    local dir pid
    dir=$(dir_of "$@")
    pid=$(cat "$dir/pid")
    kill -KILL "$pid" 2>/dev/null || true
    while alive "$pid"; do sleep 0.05; done
}

cmd_restart() {
    local dir pid
    dir=$(dir_of "$@")
    pid=$(cat "$dir/pid")
    alive "$pid" && die "$1 is running (pid $pid): kill or stop it first" 2
    need_libs
    launch "$dir"
    wait_ready "$dir" "$1"
}

cmd_signal() {
    local sig="$1" dir
    shift
    dir=$(dir_of "$@")
    kill "-$sig" "$(cat "$dir/pid")"
}

case "${1:-}" in
start) shift; cmd_start "$@" ;;
stop) shift; cmd_stop "$@" ;;
kill) shift; cmd_kill "$@" ;;
restart) shift; cmd_restart "$@" ;;
freeze) shift; cmd_signal STOP "$@" ;;
thaw) shift; cmd_signal CONT "$@" ;;
libs) need_libs; echo "$LIBS" ;;
*) usage ;;
esac
