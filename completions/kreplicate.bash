_kreplicate() {
    local i cur prev opts cmd
    COMPREPLY=()
    if [[ "${BASH_VERSINFO[0]}" -ge 4 ]]; then
        cur="$2"
    else
        cur="${COMP_WORDS[COMP_CWORD]}"
    fi
    prev="$3"
    cmd=""
    opts=""

    for i in "${COMP_WORDS[@]:0:COMP_CWORD}"
    do
        case "${cmd},${i}" in
            ",$1")
                cmd="kreplicate"
                ;;
            kreplicate,demo)
                cmd="kreplicate__subcmd__demo"
                ;;
            kreplicate,generate)
                cmd="kreplicate__subcmd__generate"
                ;;
            kreplicate,groups)
                cmd="kreplicate__subcmd__groups"
                ;;
            kreplicate,help)
                cmd="kreplicate__subcmd__help"
                ;;
            kreplicate,migrate)
                cmd="kreplicate__subcmd__migrate"
                ;;
            kreplicate,plan)
                cmd="kreplicate__subcmd__plan"
                ;;
            kreplicate,status)
                cmd="kreplicate__subcmd__status"
                ;;
            kreplicate,verify)
                cmd="kreplicate__subcmd__verify"
                ;;
            kreplicate__subcmd__help,demo)
                cmd="kreplicate__subcmd__help__subcmd__demo"
                ;;
            kreplicate__subcmd__help,generate)
                cmd="kreplicate__subcmd__help__subcmd__generate"
                ;;
            kreplicate__subcmd__help,groups)
                cmd="kreplicate__subcmd__help__subcmd__groups"
                ;;
            kreplicate__subcmd__help,help)
                cmd="kreplicate__subcmd__help__subcmd__help"
                ;;
            kreplicate__subcmd__help,migrate)
                cmd="kreplicate__subcmd__help__subcmd__migrate"
                ;;
            kreplicate__subcmd__help,plan)
                cmd="kreplicate__subcmd__help__subcmd__plan"
                ;;
            kreplicate__subcmd__help,status)
                cmd="kreplicate__subcmd__help__subcmd__status"
                ;;
            kreplicate__subcmd__help,verify)
                cmd="kreplicate__subcmd__help__subcmd__verify"
                ;;
            kreplicate__subcmd__help__subcmd__migrate,status)
                cmd="kreplicate__subcmd__help__subcmd__migrate__subcmd__status"
                ;;
            kreplicate__subcmd__migrate,help)
                cmd="kreplicate__subcmd__migrate__subcmd__help"
                ;;
            kreplicate__subcmd__migrate,status)
                cmd="kreplicate__subcmd__migrate__subcmd__status"
                ;;
            kreplicate__subcmd__migrate__subcmd__help,help)
                cmd="kreplicate__subcmd__migrate__subcmd__help__subcmd__help"
                ;;
            kreplicate__subcmd__migrate__subcmd__help,status)
                cmd="kreplicate__subcmd__migrate__subcmd__help__subcmd__status"
                ;;
            *)
                ;;
        esac
    done

    case "${cmd}" in
        kreplicate)
            opts="-X -q -v -h -V --from --to --topics --exclude --rename --config --flow --from-property --to-property --guarantee --group --trust-group-positions --until-caught-up --refresh-topics --json --start --on-gap --create-topics --config-exclude --sync-configs --sync-acls --sync-group-acls --max-bytes-per-sec --max-records-per-sec --replication-factor --delivery-timeout --timeout --commit-interval --join-timeout --shard --no-origin-header --sync-groups --sync-groups-interval --txn-max-records --txn-max-bytes --txn-max-time --metrics-addr --metrics-file --metrics-file-interval --quiet --verbose --help --version demo verify plan status groups migrate generate help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 1 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --from)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --topics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rename)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --flow)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from-property)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -X)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to-property)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guarantee)
                    COMPREPLY=($(compgen -W "none at-least-once exactly-once" -- "${cur}"))
                    return 0
                    ;;
                --group)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --refresh-topics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --start)
                    COMPREPLY=($(compgen -W "earliest latest" -- "${cur}"))
                    return 0
                    ;;
                --on-gap)
                    COMPREPLY=($(compgen -W "fail earliest latest" -- "${cur}"))
                    return 0
                    ;;
                --config-exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sync-group-acls)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-bytes-per-sec)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-records-per-sec)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --replication-factor)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --delivery-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --commit-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --join-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --shard)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sync-groups)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sync-groups-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --txn-max-records)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --txn-max-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --txn-max-time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-addr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-file-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kreplicate__subcmd__demo)
            opts="-h --guarantee --records --json --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --guarantee)
                    COMPREPLY=($(compgen -W "none at-least-once exactly-once" -- "${cur}"))
                    return 0
                    ;;
                --records)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kreplicate__subcmd__generate)
            opts="-h --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kreplicate__subcmd__groups)
            opts="-X -h --from --to --topics --exclude --rename --config --flow --from-property --to-property --groups --dry-run --allow-rewind --json --timeout --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --from)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --topics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rename)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --flow)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from-property)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -X)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to-property)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --groups)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kreplicate__subcmd__help)
            opts="demo verify plan status groups migrate generate help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kreplicate__subcmd__help__subcmd__demo)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kreplicate__subcmd__help__subcmd__generate)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kreplicate__subcmd__help__subcmd__groups)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kreplicate__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kreplicate__subcmd__help__subcmd__migrate)
            opts="status"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kreplicate__subcmd__help__subcmd__migrate__subcmd__status)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kreplicate__subcmd__help__subcmd__plan)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kreplicate__subcmd__help__subcmd__status)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kreplicate__subcmd__help__subcmd__verify)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kreplicate__subcmd__migrate)
            opts="-X -q -v -h --from --to --topics --exclude --rename --config --flow --from-property --to-property --id --groups --guarantee --continue --failback --max-lag --quiet-for --writers-timeout --create-topics --replication-factor --delivery-timeout --timeout --json --quiet --verbose --help status help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --from)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --topics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rename)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --flow)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from-property)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -X)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to-property)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --groups)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guarantee)
                    COMPREPLY=($(compgen -W "none at-least-once exactly-once" -- "${cur}"))
                    return 0
                    ;;
                --max-lag)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --quiet-for)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --writers-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --replication-factor)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --delivery-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kreplicate__subcmd__migrate__subcmd__help)
            opts="status help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kreplicate__subcmd__migrate__subcmd__help__subcmd__help)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kreplicate__subcmd__migrate__subcmd__help__subcmd__status)
            opts=""
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 4 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kreplicate__subcmd__migrate__subcmd__status)
            opts="-X -h --from --to --topics --exclude --rename --config --flow --from-property --to-property --id --failback --timeout --json --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 3 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --from)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --topics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rename)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --flow)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from-property)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -X)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to-property)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --id)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kreplicate__subcmd__plan)
            opts="-X -q -v -h --from --to --topics --exclude --rename --config --flow --from-property --to-property --guarantee --group --trust-group-positions --until-caught-up --refresh-topics --json --start --on-gap --create-topics --config-exclude --sync-configs --sync-acls --sync-group-acls --max-bytes-per-sec --max-records-per-sec --replication-factor --delivery-timeout --timeout --commit-interval --join-timeout --shard --no-origin-header --sync-groups --sync-groups-interval --txn-max-records --txn-max-bytes --txn-max-time --metrics-addr --metrics-file --metrics-file-interval --quiet --verbose --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --from)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --topics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rename)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --flow)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from-property)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -X)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to-property)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guarantee)
                    COMPREPLY=($(compgen -W "none at-least-once exactly-once" -- "${cur}"))
                    return 0
                    ;;
                --group)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --refresh-topics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --start)
                    COMPREPLY=($(compgen -W "earliest latest" -- "${cur}"))
                    return 0
                    ;;
                --on-gap)
                    COMPREPLY=($(compgen -W "fail earliest latest" -- "${cur}"))
                    return 0
                    ;;
                --config-exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sync-group-acls)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-bytes-per-sec)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-records-per-sec)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --replication-factor)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --delivery-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --commit-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --join-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --shard)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sync-groups)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sync-groups-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --txn-max-records)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --txn-max-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --txn-max-time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-addr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-file-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kreplicate__subcmd__status)
            opts="-X -q -v -h --from --to --topics --exclude --rename --config --flow --from-property --to-property --guarantee --group --trust-group-positions --until-caught-up --refresh-topics --json --start --on-gap --create-topics --config-exclude --sync-configs --sync-acls --sync-group-acls --max-bytes-per-sec --max-records-per-sec --replication-factor --delivery-timeout --timeout --commit-interval --join-timeout --shard --no-origin-header --sync-groups --sync-groups-interval --txn-max-records --txn-max-bytes --txn-max-time --metrics-addr --metrics-file --metrics-file-interval --quiet --verbose --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --from)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --topics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rename)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --flow)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from-property)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -X)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to-property)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --guarantee)
                    COMPREPLY=($(compgen -W "none at-least-once exactly-once" -- "${cur}"))
                    return 0
                    ;;
                --group)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --refresh-topics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --start)
                    COMPREPLY=($(compgen -W "earliest latest" -- "${cur}"))
                    return 0
                    ;;
                --on-gap)
                    COMPREPLY=($(compgen -W "fail earliest latest" -- "${cur}"))
                    return 0
                    ;;
                --config-exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sync-group-acls)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-bytes-per-sec)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --max-records-per-sec)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --replication-factor)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --delivery-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --commit-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --join-timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --shard)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sync-groups)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --sync-groups-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --txn-max-records)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --txn-max-bytes)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --txn-max-time)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-addr)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-file)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --metrics-file-interval)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
        kreplicate__subcmd__verify)
            opts="-X -h --from --to --topics --exclude --rename --config --flow --from-property --to-property --json --accept-duplicates --configs --acls --config-exclude --timeout --help"
            if [[ ${cur} == -* || ${COMP_CWORD} -eq 2 ]] ; then
                COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
                return 0
            fi
            case "${prev}" in
                --from)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --topics)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --rename)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --flow)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --from-property)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                -X)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --to-property)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --config-exclude)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                --timeout)
                    COMPREPLY=($(compgen -f "${cur}"))
                    return 0
                    ;;
                *)
                    COMPREPLY=()
                    ;;
            esac
            COMPREPLY=( $(compgen -W "${opts}" -- "${cur}") )
            return 0
            ;;
    esac
}

if [[ "${BASH_VERSINFO[0]}" -eq 4 && "${BASH_VERSINFO[1]}" -ge 4 || "${BASH_VERSINFO[0]}" -gt 4 ]]; then
    complete -F _kreplicate -o nosort -o bashdefault -o default kreplicate
else
    complete -F _kreplicate -o bashdefault -o default kreplicate
fi
