#!/usr/bin/env bash
# Apache Kafka clusters (KRaft, every node broker and controller in one JVM) on loopback, for the
# tests, the benchmarks and people. The jars come from scripts/install-deps.sh.
#
#   scripts/kafka.sh start NAME PORT [--nodes N] [--protocol PLAINTEXT|SASL_PLAINTEXT|SSL|SASL_SSL]
#                    [--user NAME:PASSWORD]... [--acl] [--set key=value]...
#                    [--advertise-port PORT2] [--version V [--zookeeper]]
#       Formats (first start) and starts cluster NAME with its client listener on 127.0.0.1:PORT,
#       returns once it answers there, and prints one line:
#           NAME bootstrap=127.0.0.1:PORT pid=PID dir=DIR
#       --nodes N (default 1): N nodes with client ports PORT..PORT+N-1 (PORT 0: free ones),
#       internal topics and new topics with min(N,3) replicas, min.insync.replicas 2 from 3
#       nodes; the line lists every node: bootstrap=127.0.0.1:P1,127.0.0.1:P2,... pid=PID1,...
#       SSL/SASL_SSL: the CA certificate is DIR/ca.pem (the broker's certificate names localhost
#       and 127.0.0.1). Users get SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN credentials. --acl turns
#       on the StandardAuthorizer (no ACL = denied) with the first user as super user (SASL only:
#       PLAINTEXT and SSL clients are ANONYMOUS, which the broker needs as a super user). --set adds
#       a server.properties line (last one wins), e.g. --set log.retention.ms=3600000.
#       --advertise-port tells clients to connect to PORT2 instead (a proxy in front of PORT); with
#       --nodes N, a comma list of N ports, node I's the I-th. PORT 0 picks a free port. A NAME that is already running (on PORT, or on any
#       port with PORT 0) is left as it is and its line printed again: concurrent starts of one
#       NAME start one cluster (tests share clusters this way).
#       --version V: Kafka V's jars (.cache/kafka/V/libs; default: the pom's, or
#       KREPLICATE_KAFKA_VERSION): 4.x and 3.x run KRaft; 2.8.x, and 3.x with --zookeeper (or
#       KREPLICATE_KAFKA_ZOOKEEPER=1), run ZooKeeper mode: one ZooKeeper and one broker, started
#       and stopped together (the line adds zk=127.0.0.1:ZKPORT zkpid=PID; one node only; SCRAM
#       users are created through ZooKeeper before the broker starts).
#   scripts/kafka.sh stop NAME      SIGTERM, wait for a clean shutdown, delete DIR
#   scripts/kafka.sh kill NAME      SIGKILL; DIR (and the log) stay for `restart`
#   scripts/kafka.sh restart NAME   start a stopped or killed NAME (a cluster: its nodes that are
#                                   down) again on its log, wait until ready
#   scripts/kafka.sh freeze NAME    SIGSTOP: the broker hangs with its sockets open
#   scripts/kafka.sh thaw NAME      SIGCONT
#       stop|kill|restart|freeze|thaw NAME --node I: node I only (1..N); `stop --node` keeps its
#       log (controlled shutdown), `restart --node` prints NAME node=I bootstrap=... pid=... dir=...
#   scripts/kafka.sh roll NAME      rolling restart: one node at a time, SIGTERM, start it on its
#                                   log, wait until every partition has its full ISR again; one
#                                   node line as each is back
#   scripts/kafka.sh settled NAME   wait until no partition is under-replicated
#   scripts/kafka.sh libs [NAME]    print the folder that holds the jars (broker, tools, MM2):
#                                   the default version's, or cluster NAME's
#   scripts/kafka.sh libs --mirror  the jars to run MirrorMaker 2 from (4.4.0 has none here)
#   scripts/kafka.sh version NAME   print cluster NAME's Kafka version and mode (4.4.0 kraft)
#
# Env: KREPLICATE_KAFKA_HOME (default REPO/.cache/kafka/run) holds one DIR per NAME (a cluster:
#      DIR/nI per node); KREPLICATE_KAFKA_LIBS overrides the jar folder; KAFKA_HEAP_OPTS the JVM's
#      heap flags; KREPLICATE_KAFKA_JVM_OPTS more JVM flags for the broker (the tests:
#      -XX:TieredStopAtLevel=1); KREPLICATE_KAFKA_START_TIMEOUT seconds to wait for a start
#      (default 60); KREPLICATE_KAFKA_SETTLE_TIMEOUT for full ISRs (default 120).
# Exit codes: 0 done; 1 the broker did not start (its log's tail is printed); 2 bad usage.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# One pin for the default version: the pom install-deps.sh fetches from.
POM_VERSION="$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$REPO/scripts/kafka/pom.xml")"
KAFKA_VERSION="${KREPLICATE_KAFKA_VERSION:-$POM_VERSION}"
LIBS="${KREPLICATE_KAFKA_LIBS:-$REPO/.cache/kafka/$KAFKA_VERSION/libs}"
MODE=kraft
PEM_PASSWORD=kreplicate-test # Kafka 2.x's PEM keystore needs one (a test key, not a secret)
HOME_DIR="${KREPLICATE_KAFKA_HOME:-$REPO/.cache/kafka/run}"
START_TIMEOUT="${KREPLICATE_KAFKA_START_TIMEOUT:-60}"
SETTLE_TIMEOUT="${KREPLICATE_KAFKA_SETTLE_TIMEOUT:-120}"

usage() { sed -n '4,40p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
die() {
    # A ZooKeeper-mode start that failed leaves no ZooKeeper behind (nobody would stop it).
    [ -z "${ZK_DIR:-}" ] || stop_zk "$ZK_DIR"
    echo "kafka.sh: $1" >&2
    exit "${2:-1}"
}

need_libs() {
    [ -f "$LIBS/.complete" ] || die "no Kafka jars at $LIBS: run scripts/install-deps.sh" 1
}

# use_version V: LIBS for Kafka V (KREPLICATE_KAFKA_LIBS stands for the default version only).
use_version() {
    [[ $1 =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "--version takes a Kafka version such as 4.4.0: '$1'" 2
    if [ "$1" != "$KAFKA_VERSION" ] || [ -z "${KREPLICATE_KAFKA_LIBS:-}" ]; then
        LIBS="$REPO/.cache/kafka/$1/libs"
    fi
    KAFKA_VERSION="$1"
}

# cluster_version NAME: LIBS, KAFKA_VERSION and MODE (kraft|zk) of a cluster that was started.
cluster_version() {
    local dir="$HOME_DIR/$1"
    [ ! -f "$dir/version" ] || use_version "$(cat "$dir/version")"
    MODE=kraft
    [ ! -f "$dir/mode" ] || MODE=$(cat "$dir/mode")
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
# A ZooKeeper-mode broker says `[KafkaServer id=1] started` before its controller reached its
# listener with the first UpdateMetadata (its connection is refused until then): meanwhile it
# answers Metadata with no broker and no controller, and a librdkafka admin request waits its
# whole timeout for a controller (a first CreateTopics did, 3 times). Ready once connected.
started() {
    grep -qE "Kafka Server started" "$1/server.log" 2>/dev/null && return 0
    grep -qE "\] started \(kafka\.server\.KafkaServer\)" "$1/server.log" 2>/dev/null &&
        grep -qE "connected to .* for sending state change requests" "$1/server.log" 2>/dev/null
}

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
    # Kafka's PEM keystore: a PKCS#8 key and the chain in one file; unencrypted, except for
    # Kafka 2.x, which refuses a PEM keystore without ssl.key.password.
    if [[ $KAFKA_VERSION == 2.* ]]; then
        openssl pkcs8 -topk8 -v1 PBE-SHA1-3DES -passout pass:"$PEM_PASSWORD" -in "$d/broker.key.pem" \
            -out "$d/broker.key" 2>/dev/null
    else
        openssl pkcs8 -topk8 -nocrypt -in "$d/broker.key.pem" -out "$d/broker.key" 2>/dev/null
    fi
    cat "$d/broker.key" "$d/broker.crt" "$d/ca.pem" >"$d/keystore.pem"
    rm -f "$d/broker.csr" "$d/san.ext" "$d/ca.srl" "$d/broker.key.pem"
}

write_config() { # the single node: controller and internal ports picked here
    local dir="$1" port="$2" proto="$3" acl="$4" aport="${5:-$2}"
    local cport iport
    read -r cport iport < <(free_ports 2 "$port" "$aport")
    node_config "$dir" 1 "1@127.0.0.1:$cport" 1 "$port" "$cport" "$iport" "$proto" "$acl" "$aport"
}

# node_config DIR ID VOTERS N PORT CPORT IPORT PROTO ACL APORT: node ID of an N-node cluster.
node_config() {
    local dir="$1" id="$2" voters="$3" n="$4" port="$5" cport="$6" iport="$7" proto="$8" acl="$9" aport="${10}"
    local lname=${proto,,} rf=$((n < 3 ? n : 3))
    local isr=$((rf < 2 ? 1 : 2)) parts=$((n == 1 ? 1 : n))
    {
        if [ "$MODE" = zk ]; then
            # ZooKeeper mode: no controller listener; the broker's own connections use INTERNAL.
            echo "broker.id=$id"
            echo "zookeeper.connect=127.0.0.1:$(cat "$dir/zk/port")"
            # A killed broker's registration (an ephemeral node) expires with its session: 6 s,
            # not 18, before `restart` can register it again.
            echo "zookeeper.session.timeout.ms=6000"
            echo "listeners=$proto://127.0.0.1:$port,INTERNAL://127.0.0.1:$iport"
        else
            echo "process.roles=broker,controller"
            echo "node.id=$id"
            echo "controller.quorum.voters=$voters"
            # The client listener speaks PROTO; the controller and the broker's own connections
            # use loopback PLAINTEXT listeners of their own: only the client listener needs
            # credentials.
            echo "listeners=$proto://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport,INTERNAL://127.0.0.1:$iport"
            echo "controller.listener.names=CONTROLLER"
        fi
        echo "advertised.listeners=$proto://127.0.0.1:$aport,INTERNAL://127.0.0.1:$iport"
        echo "inter.broker.listener.name=INTERNAL"
        echo "listener.security.protocol.map=CONTROLLER:PLAINTEXT,INTERNAL:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL"
        echo "log.dirs=$dir/data"
        # Internal topics with min(N, 3) replicas (one node cannot hold three) and one partition
        # per node (one coordinator per node); what users run from three nodes on: min ISR 2.
        echo "offsets.topic.replication.factor=$rf"
        echo "offsets.topic.num.partitions=$parts"
        echo "transaction.state.log.replication.factor=$rf"
        echo "transaction.state.log.min.isr=$isr"
        echo "transaction.state.log.num.partitions=$parts"
        echo "share.coordinator.state.topic.replication.factor=$rf"
        echo "share.coordinator.state.topic.min.isr=$isr"
        if ((n > 1)); then
            echo "default.replication.factor=$rf"
            echo "min.insync.replicas=$isr"
        fi
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
            [[ $KAFKA_VERSION != 2.* ]] || echo "ssl.key.password=$PEM_PASSWORD"
            echo "ssl.client.auth=none"
        fi
        if [ "$acl" = 1 ] && [ "$MODE" = zk ]; then
            echo "authorizer.class.name=kafka.security.authorizer.AclAuthorizer"
        elif [ "$acl" = 1 ]; then
            echo "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer"
        fi
        if [ "$acl" = 1 ]; then
            echo "allow.everyone.if.no.acl.found=false"
            # The broker reaches its controller and itself over PLAINTEXT loopback listeners as
            # ANONYMOUS: without it as a super user the broker never registers.
            echo "super.users=User:ANONYMOUS;User:${USERS[0]%%:*}"
        fi
        local kv
        for kv in "${SETS[@]}"; do echo "$kv"; done
    } >"$dir/server.properties"
    log_config "$dir" "$dir/server.log"
}

log_config() { # DIR LOGFILE: DIR/log4j2.properties writing to LOGFILE
    cat >"$1/log4j2.properties" <<EOF
status = error
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = $2
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

wait_up() { # DIR WHAT [--rebind-ok]: return 3 (nothing printed) when the node could not bind a port
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
}

wait_ready() { # DIR NAME [--rebind-ok]: wait_up, then the cluster's line
    wait_up "$@" || return $?
    local zk=""
    [ ! -f "$1/zk/pid" ] || zk=" zk=127.0.0.1:$(cat "$1/zk/port") zkpid=$(cat "$1/zk/pid")"
    echo "$2 bootstrap=127.0.0.1:$(cat "$1/port") pid=$(cat "$1/pid") dir=$1$zk"
}

cmd_start() {
    (($# >= 2)) || usage
    local name="$1" port="$2"
    shift 2
    [[ $name =~ ^[A-Za-z0-9._-]+$ ]] || die "NAME must be letters, digits, '.', '_' or '-': '$name'" 2
    [[ $port =~ ^[0-9]+$ ]] || die "PORT must be a number: '$port'" 2
    local proto=PLAINTEXT acl=0 aport="" nodes=1 zk="${KREPLICATE_KAFKA_ZOOKEEPER:-0}"
    USERS=()
    SETS=()
    while (($#)); do
        case "$1" in
        --protocol) proto="${2:-}"; shift 2 || usage ;;
        --user) USERS+=("${2:-}"); shift 2 || usage ;;
        --acl) acl=1; shift ;;
        --set) SETS+=("${2:-}"); shift 2 || usage ;;
        --advertise-port) aport="${2:-}"; shift 2 || usage ;;
        --nodes) nodes="${2:-}"; shift 2 || usage ;;
        --version) use_version "${2:-}"; shift 2 || usage ;;
        --zookeeper) zk=1; shift ;;
        *) die "unknown option '$1' (see scripts/kafka.sh with no arguments)" 2 ;;
        esac
    done
    case "$proto" in PLAINTEXT | SASL_PLAINTEXT | SSL | SASL_SSL) ;; *) die "unknown --protocol '$proto'" 2 ;; esac
    [[ $nodes =~ ^[1-9][0-9]?$ ]] || die "--nodes takes a number from 1 to 99: '$nodes'" 2
    # Kafka 2.x has ZooKeeper mode only; 4.x has KRaft only.
    case "$KAFKA_VERSION" in
    [012].*) MODE=zk ;;
    3.*) [ "$zk" = 0 ] || MODE=zk ;;
    *) [ "$zk" = 0 ] || die "Kafka $KAFKA_VERSION has no ZooKeeper mode (3.9 is the last with it)" 2 ;;
    esac
    [ "$MODE" = kraft ] || ((nodes == 1)) || die "ZooKeeper mode is for one node only" 2
    local -a aports=()
    [ -z "$aport" ] || IFS=, read -r -a aports <<<"$aport"
    local ap
    for ap in "${aports[@]}"; do [[ $ap =~ ^[1-9][0-9]*$ ]] || die "--advertise-port takes port numbers: '$aport'" 2; done
    [ -z "$aport" ] || ((${#aports[@]} == nodes)) || die "--advertise-port takes one port per node ($nodes): '$aport'" 2
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
    if [ -f "$dir/nodes" ] && [ -z "$(node_dirs "$name" | while read -r d; do alive "$(cat "$d/pid")" || echo down; done)" ]; then
        [ "$port" = 0 ] || [ "$(cat "$dir/n1/port")" = "$port" ] \
            || die "$name is already running on port $(cat "$dir/n1/port")" 2
        for d in $(node_dirs "$name"); do wait_up "$d" "$name"; done
        cluster_line "$name"
        return
    fi
    if [ -f "$dir/pid" ] && alive "$(cat "$dir/pid")"; then
        [ "$port" = 0 ] || [ "$(cat "$dir/port")" = "$port" ] \
            || die "$name is already running on port $(cat "$dir/port")" 2
        [ ! -f "$dir/version" ] || [ "$(cat "$dir/version")" = "$KAFKA_VERSION" ] \
            || die "$name is already running Kafka $(cat "$dir/version" 2>/dev/null), not $KAFKA_VERSION" 2
        wait_ready "$dir" "$name"
        return
    fi
    if ((nodes > 1)); then
        start_cluster "$name" "$port" "$proto" "$acl" "$nodes" "$aport"
        return
    fi
    local given_port="$port"
    [ "$port" != 0 ] || port=$(free_port)
    rm -rf "$dir"
    mkdir -p "$dir/data"
    echo "$port" >"$dir/port"
    echo "$KAFKA_VERSION" >"$dir/version"
    echo "$MODE" >"$dir/mode"
    [[ $proto != *SSL ]] || make_tls "$dir"
    if [ "$MODE" = zk ]; then
        ZK_DIR="$dir"
        start_zk "$dir" "$name"
        write_config "$dir" "$port" "$proto" "$acl" "${aport:-$port}"
        zk_users "$dir" || { stop_zk "$dir"; die "$name: creating SCRAM users through ZooKeeper failed"; }
    else
        write_config "$dir" "$port" "$proto" "$acl" "${aport:-$port}"
        local id scram=()
        id=$(uuid)
        for u in "${USERS[@]}"; do
            scram+=(--add-scram "SCRAM-SHA-256=[name=${u%%:*},password=${u#*:}]")
            scram+=(--add-scram "SCRAM-SHA-512=[name=${u%%:*},password=${u#*:}]")
        done
        format "$dir" "$id" "${scram[@]}" || die "$name: formatting $dir failed"
    fi
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

# ZooKeeper mode: one standalone ZooKeeper per cluster in DIR/zk, from the same jar folder.
start_zk() {
    local dir="$1" name="$2" zport attempt
    mkdir -p "$dir/zk/data"
    for attempt in 1 2 3; do
        zport=$(free_port)
        echo "$zport" >"$dir/zk/port"
        cat >"$dir/zk/zoo.cfg" <<EOF
tickTime=500
dataDir=$dir/zk/data
clientPort=$zport
clientPortAddress=127.0.0.1
admin.enableServer=false
maxClientCnxns=0
EOF
        log_config "$dir/zk" "$dir/zk/zk.log"
        : >"$dir/zk/zk.log"
        # shellcheck disable=SC2086
        setsid java -Xmx128m -Xms128m ${KREPLICATE_KAFKA_JVM_OPTS:-} -Djava.awt.headless=true \
            -Dlog4j2.configurationFile="$dir/zk/log4j2.properties" -cp "$LIBS/*" \
            org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zk/zoo.cfg" \
            >"$dir/zk/stdout.log" 2>&1 </dev/null 9>&- &
        echo $! >"$dir/zk/pid"
        local deadline=$((SECONDS + START_TIMEOUT))
        while alive "$(cat "$dir/zk/pid")" && ! port_open "$zport" && ((SECONDS < deadline)); do sleep 0.1; done
        port_open "$zport" && return 0
        kill -KILL "$(cat "$dir/zk/pid")" 2>/dev/null || true
        grep -qs "Address already in use" "$dir/zk/zk.log" "$dir/zk/stdout.log" || break
    done
    tail -n 30 "$dir/zk/zk.log" "$dir/zk/stdout.log" >&2 || true
    die "$name: ZooKeeper did not start (log above, in $dir/zk)"
}

stop_zk() { # DIR: SIGTERM, SIGKILL after 10 s
    local pid
    [ -f "$1/zk/pid" ] || return 0
    pid=$(cat "$1/zk/pid")
    kill -TERM "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + 10))
    while alive "$pid" && ((SECONDS < deadline)); do sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
}

# SCRAM credentials live in ZooKeeper in ZooKeeper mode: Kafka's ConfigCommand writes them there
# before the broker starts (a JVM start per user).
zk_users() {
    local dir="$1" u
    for u in "${USERS[@]}"; do
        java -Xmx256m -XX:TieredStopAtLevel=1 -Dlog4j2.configurationFile="$dir/zk/log4j2.properties" -cp "$LIBS/*" \
            kafka.admin.ConfigCommand --zookeeper "127.0.0.1:$(cat "$dir/zk/port")" --alter \
            --add-config "SCRAM-SHA-256=[password=${u#*:}],SCRAM-SHA-512=[password=${u#*:}]" \
            --entity-type users --entity-name "${u%%:*}" >>"$dir/zk/users.log" 2>&1 \
            || { cat "$dir/zk/users.log" >&2; return 1; }
    done
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
    # node.id too: a cluster's nodes share one copy (static quorum: the voters are not in it).
    local node
    node=$(sed -n 's/^node\.id=//p' "$dir/server.properties")
    sed -i -e "s/^cluster\.id=.*/cluster.id=$id/" -e "s/^directory\.id=.*/directory.id=$(uuid)/" \
        -e "s/^node\.id=.*/node.id=$node/" "$dir/data/meta.properties"
}

# cluster_config DIR PORT PROTO ACL N [APORTS]: every node's folder DIR/nI with its
# server.properties; client ports PORT..PORT+N-1 (PORT 0: free ones), controller and internal
# ports free ones; node I advertises the I-th of the comma list APORTS, if given.
cluster_config() {
    local dir="$1" port="$2" proto="$3" acl="$4" n="$5" i voters=""
    local -a cl=() ctl=() adv=()
    [ -z "${6:-}" ] || IFS=, read -r -a adv <<<"$6"
    if [ "$port" = 0 ]; then
        read -r -a cl < <(free_ports "$n" "${adv[@]}")
    else
        for ((i = 0; i < n; i++)); do cl+=($((port + i))); done
    fi
    read -r -a ctl < <(free_ports $((2 * n)) "${cl[@]}" "${adv[@]}")
    for ((i = 1; i <= n; i++)); do voters+="${voters:+,}$i@127.0.0.1:${ctl[i - 1]}"; done
    for ((i = 1; i <= n; i++)); do
        mkdir -p "$dir/n$i"
        echo "${cl[i - 1]}" >"$dir/n$i/port"
        [[ $proto != *SSL ]] || cp "$dir/keystore.pem" "$dir/n$i/"
        node_config "$dir/n$i" "$i" "$voters" "$n" "${cl[i - 1]}" "${ctl[i - 1]}" "${ctl[n + i - 1]}" \
            "$proto" "$acl" "${adv[i - 1]:-${cl[i - 1]}}"
    done
}

# N nodes, each broker and controller, formatted with one cluster id and started together (a
# node is ready only once a majority of the controllers elected a leader).
start_cluster() {
    local name="$1" port="$2" proto="$3" acl="$4" n="$5" aport="${6:-}" dir="$HOME_DIR/$1"
    local id u i attempt rc scram=()
    rm -rf "$dir"
    mkdir -p "$dir"
    [[ $proto != *SSL ]] || make_tls "$dir"
    echo "$n" >"$dir/nodes"
    id=$(uuid)
    for u in "${USERS[@]}"; do
        scram+=(--add-scram "SCRAM-SHA-256=[name=${u%%:*},password=${u#*:}]")
        scram+=(--add-scram "SCRAM-SHA-512=[name=${u%%:*},password=${u#*:}]")
    done
    # A failed start leaves no node running (nobody would stop them).
    trap 'kill_nodes "$name"' EXIT
    for attempt in 1 2 3; do
        cluster_config "$dir" "$port" "$proto" "$acl" "$n" "$aport"
        for ((i = 1; i <= n; i++)); do
            rm -rf "$dir/n$i/data"
            mkdir -p "$dir/n$i/data"
            format "$dir/n$i" "$id" "${scram[@]}" || die "$name: formatting node $i failed"
        done
        for ((i = 1; i <= n; i++)); do launch "$dir/n$i"; done
        rc=0
        for ((i = 1; i <= n; i++)); do
            wait_up "$dir/n$i" "$name node $i" --rebind-ok || { rc=$?; break; }
        done
        if ((rc == 0)); then
            trap - EXIT
            cluster_line "$name"
            return 0
        fi
        kill_nodes "$name"
        echo "kafka.sh: $name: a port was taken during start-up (attempt $attempt), picking others" >&2
    done
    die "$name: ports taken during start-up, three times"
}

# NAME bootstrap=127.0.0.1:P1,127.0.0.1:P2,... pid=PID1,PID2,... dir=DIR
cluster_line() {
    local d boot="" pids=""
    for d in $(node_dirs "$1"); do
        boot+="${boot:+,}127.0.0.1:$(cat "$d/port")"
        pids+="${pids:+,}$(cat "$d/pid")"
    done
    echo "$1 bootstrap=$boot pid=$pids dir=$HOME_DIR/$1"
}

node_line() { # NAME I DIR
    echo "$1 node=$2 bootstrap=127.0.0.1:$(cat "$3/port") pid=$(cat "$3/pid") dir=$3"
}

# node_dirs NAME [I]: the folder of each node of NAME (a single node's is NAME's own), or of node I.
node_dirs() {
    local name="$1" i="${2:-}" dir="$HOME_DIR/${1:-}" n=1 j
    [ -n "$name" ] && { [ -f "$dir/pid" ] || [ -f "$dir/nodes" ]; } \
        || die "no cluster '$name' under $HOME_DIR" 2
    [ ! -f "$dir/nodes" ] || n=$(cat "$dir/nodes")
    [ -z "$i" ] || { [[ $i =~ ^[0-9]+$ ]] && ((i >= 1 && i <= n)); } \
        || die "$name has nodes 1 to $n, not '$i'" 2
    if [ ! -f "$dir/nodes" ]; then
        echo "$dir"
        return
    fi
    for ((j = 1; j <= n; j++)); do
        [ -n "$i" ] && ((j != i)) || echo "$dir/n$j"
    done
}

# NAME [--node I] into NAME and NODE.
name_node() {
    NAME="${1:-}" NODE=""
    (($#)) && shift
    while (($#)); do
        case "$1" in
        --node) NODE="${2:-}"; shift 2 || usage ;;
        *) die "unknown option '$1' (see scripts/kafka.sh with no arguments)" 2 ;;
        esac
    done
}

kill_nodes() {
    local d
    for d in $(node_dirs "$1" 2>/dev/null); do
        [ ! -f "$d/pid" ] || kill -KILL "$(cat "$d/pid")" 2>/dev/null || true
    done
}

# SIGTERM (controlled shutdown: a node moves its leaders away first), SIGKILL after LIMIT s.
term_wait() { # LIMIT DIR...
    local limit="$1" d pid
    shift
    for d in "$@"; do
        pid=$(cat "$d/pid")
        kill -CONT "$pid" 2>/dev/null || true
        kill -TERM "$pid" 2>/dev/null || true
    done
    local deadline=$((SECONDS + limit))
    for d in "$@"; do
        pid=$(cat "$d/pid")
        while alive "$pid" && ((SECONDS < deadline)); do sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null || true
        while alive "$pid"; do sleep 0.05; done
    done
}

cmd_stop() {
    name_node "$@"
    cluster_version "$NAME"
    local dirs
    dirs=$(node_dirs "$NAME" "$NODE")
    if [ -n "$NODE" ]; then
        # shellcheck disable=SC2086
        term_wait 60 $dirs
        return
    fi
    # shellcheck disable=SC2086
    term_wait 30 $dirs
    stop_zk "$HOME_DIR/$NAME"
    rm -rf "${HOME_DIR:?}/$NAME" "$HOME_DIR/.$NAME.lock"
}

cmd_kill() {
    name_node "$@"
    local d pid
    for d in $(node_dirs "$NAME" "$NODE"); do
        pid=$(cat "$d/pid")
        kill -KILL "$pid" 2>/dev/null || true
        while alive "$pid"; do sleep 0.05; done
    done
}

# Starts the nodes given (or every node that is down) on their logs; the line of the one node
# asked for, or the cluster's.
cmd_restart() {
    name_node "$@"
    local d down=() i
    for d in $(node_dirs "$NAME" "$NODE"); do
        if alive "$(cat "$d/pid")"; then
            # A cluster restarts whichever nodes are down; a node asked for by name must be down.
            [ -f "$HOME_DIR/$NAME/nodes" ] && [ -z "$NODE" ] && continue
            die "$NAME${NODE:+ node $NODE} is running (pid $(cat "$d/pid")): kill or stop it first" 2
        fi
        down+=("$d")
    done
    ((${#down[@]})) || die "every node of $NAME is running: kill or stop one first" 2
    cluster_version "$NAME"
    need_libs
    for d in "${down[@]}"; do launch "$d"; done
    for d in "${down[@]}"; do wait_up "$d" "$NAME"; done
    if [ ! -f "$HOME_DIR/$NAME/nodes" ]; then
        wait_ready "$HOME_DIR/$NAME" "$NAME"
    elif [ -n "$NODE" ]; then
        node_line "$NAME" "$NODE" "${down[0]}"
    else
        cluster_line "$NAME"
    fi
}

cmd_signal() {
    local sig="$1" d
    shift
    name_node "$@"
    for d in $(node_dirs "$NAME" "$NODE"); do kill "-$sig" "$(cat "$d/pid")"; done
}

# Waits until every partition (internal topics too) has its full ISR: Kafka's TopicCommand
# lists no under-replicated partition (a JVM start per look: about 2 CPU seconds with C1).
cmd_settled() {
    name_node "$@"
    cluster_version "$NAME"
    need_libs
    local d boot="" out deadline=$((SECONDS + SETTLE_TIMEOUT))
    for d in $(node_dirs "$NAME"); do
        boot+="${boot:+,}$(sed -n 's/^listeners=.*INTERNAL:\/\/\([^,]*\).*/\1/p' "$d/server.properties")"
    done
    while :; do
        if out=$(java -Xmx128m -XX:TieredStopAtLevel=1 -Dlog4j2.level=ERROR -cp "$LIBS/*" \
            org.apache.kafka.tools.TopicCommand --bootstrap-server "$boot" --describe \
            --under-replicated-partitions 2>/dev/null) && [ -z "$out" ]; then
            return 0
        fi
        ((SECONDS < deadline)) \
            || die "$NAME: partitions still under-replicated after ${SETTLE_TIMEOUT}s: ${out:-TopicCommand failed}"
        sleep 1
    done
}

# A rolling restart as operators do it: one node at a time, SIGTERM, start it on its log, wait
# until every partition has its full ISR again, then the next. One node line as each is back.
cmd_roll() {
    name_node "$@"
    [ -z "$NODE" ] || die "roll takes every node in turn, no --node" 2
    cluster_version "$NAME"
    need_libs
    local d i=0
    for d in $(node_dirs "$NAME"); do
        i=$((i + 1))
        term_wait 60 "$d"
        launch "$d"
        wait_up "$d" "$NAME node $i"
        cmd_settled "$NAME"
        node_line "$NAME" "$i" "$d"
    done
}

case "${1:-}" in
start) shift; cmd_start "$@" ;;
stop) shift; cmd_stop "$@" ;;
kill) shift; cmd_kill "$@" ;;
restart) shift; cmd_restart "$@" ;;
freeze) shift; cmd_signal STOP "$@" ;;
thaw) shift; cmd_signal CONT "$@" ;;
roll) shift; cmd_roll "$@" ;;
settled) shift; cmd_settled "$@" ;;
libs)
    if [ "${2:-}" = --mirror ]; then
        # MirrorMaker 2: connect-mirror 4.4.0 is not on Maven Central here, so the default
        # version's jars if they hold it, else the newest fetched version's that do.
        for d in "$LIBS" $(printf '%s\n' "$REPO"/.cache/kafka/*/libs | sort -rV); do
            if [ -f "$d/.complete" ] && compgen -G "$d/connect-mirror-[0-9]*.jar" >/dev/null; then
                echo "$d"
                exit 0
            fi
        done
        die "no MirrorMaker 2 jars under $REPO/.cache/kafka: run scripts/install-deps.sh"
    fi
    [ -z "${2:-}" ] || { node_dirs "$2" >/dev/null; cluster_version "$2"; }
    need_libs
    echo "$LIBS"
    ;;
version) node_dirs "${2:-}" >/dev/null; cluster_version "$2"; echo "$KAFKA_VERSION $MODE" ;;
*) usage ;;
esac
