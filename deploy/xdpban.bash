# xdpban.bash - bash completion of xdpban(8) and xdpband(8), installed by `make install` as
# share/bash-completion/completions/xdpban (and xdpband, a link to it).
#
# It knows no command, option or key itself: it reads them from the program it completes,
# whose help is printed from the program's own tables (the CLI's command and option tables,
# the keys of `set`, the daemon's option table), so that it cannot fall behind them. The
# subcommands offered after `lists` are its keys, and the layers after `lists clear|add|del` theirs; the addresses offered after `unban` are the banned prefixes `xdpban bans` lists (nothing when it
# cannot list them: no daemon, no maps, no permission). Nothing here changes any state.

# _xdpban_help_words PROG ARGS...: the options ("--name") and, under "Commands:", the command
# names that `PROG ARGS...` prints; "Keys: a b c" gives its keys.
_xdpban_help_words() {
	"$@" 2>/dev/null | awk '
		/^Commands:/ { cmds = 1; next }
		/^$/ { cmds = 0 }
		/^Keys:/ { for (i = 2; i <= NF; i++) print "key", $i; next }
		cmds && /^  [a-z]/ { print "command", $1; next }
		/^ +-/ { for (i = 1; i <= 2 && i <= NF; i++) if ($i ~ /^--[a-z]/) print "option", $i }'
}

# _xdpban_pick KIND: the words of KIND ("command", "option", "key") from $words.
_xdpban_pick() { awk -v k="$1" '$1 == k { print $2 }' <<<"$words"; }

# _xdpban_value_of OPTION METAVAR: completions for an option's value, by what it names.
_xdpban_value_of() {
	case $1 in
	FILE | PATH) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
	DIR) mapfile -t COMPREPLY < <(compgen -d -- "$cur") ;;
	IFACE) mapfile -t COMPREPLY < <(compgen -W "$(ls /sys/class/net 2>/dev/null)" -- "$cur") ;;
	*) COMPREPLY=() ;;
	esac
}

# _xdpban_metavar PROG ARGS... -- OPTION: the value an option takes ("FILE"), or nothing.
_xdpban_metavar() {
	local opt=${*: -1}
	"${@:1:$#-2}" 2>/dev/null | awk -v o="$opt" '/^ +-/ {
		for (i = 1; i <= 2 && i <= NF; i++) {
			w = $i; sub(/,$/, "", w)
			if (w != o) continue
			for (j = i + 1; j <= NF && $j ~ /^-/; j++) ;
			if ($j ~ /^[A-Z]+$/) print $j
			exit
		}
	}'
}

_xdpban() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local prog=${COMP_WORDS[0]} cmd='' i words metavar
	local globals=() # the global options given so far, with their values: the socket to ask
	COMPREPLY=()
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--socket | --pin-dir | --config)
			globals+=("${COMP_WORDS[i]}" "${COMP_WORDS[i + 1]}")
			((i++))
			;;
		-*) ;;
		*)
			cmd=${COMP_WORDS[i]}
			break
			;;
		esac
	done
	# A subcommand ("lists load") has help and options of its own.
	local sub=()
	if [[ $cmd == lists && $COMP_CWORD -gt $((i + 1)) && ${COMP_WORDS[i + 1]} != -* ]]; then
		sub=("${COMP_WORDS[i + 1]}")
		((i++))
	fi
	if [[ $prev == -* ]]; then
		if [[ -n $cmd ]]; then
			metavar=$(_xdpban_metavar "$prog" help "$cmd" "${sub[@]}" -- "$prev")
		else
			metavar=$(_xdpban_metavar "$prog" --help -- "$prev")
		fi
		if [[ -n $metavar ]]; then
			_xdpban_value_of "$metavar"
			return 0
		fi
	fi
	if [[ -z $cmd ]]; then
		words=$(_xdpban_help_words "$prog" --help)
		if [[ $cur == -* ]]; then
			mapfile -t COMPREPLY < <(compgen -W "$(_xdpban_pick option)" -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "$(_xdpban_pick command)" -- "$cur")
		fi
		return 0
	fi
	words=$(_xdpban_help_words "$prog" help "$cmd" "${sub[@]}")
	if [[ $cur == -* ]]; then
		local stdin=''
		[[ $cmd == lists && ${sub[0]:-} == load ]] && stdin=- # a FILE: standard input
		mapfile -t COMPREPLY < <(compgen -W "$(_xdpban_pick option) $stdin" -- "$cur")
		return 0
	fi
	case $cmd in
	help)
		words=$(_xdpban_help_words "$prog" --help)
		((COMP_CWORD == i + 1)) &&
			mapfile -t COMPREPLY < <(compgen -W "$(_xdpban_pick command)" -- "$cur")
		;;
	lists)
		# A subcommand with keys takes a layer first; load's words, and clear's after its
		# layer, are files.
		if ((${#sub[@]})) && ((COMP_CWORD == i + 1)) && [[ -n $(_xdpban_pick key) ]]; then
			mapfile -t COMPREPLY < <(compgen -W "$(_xdpban_pick key)" -- "$cur")
		elif ((${#sub[@]})); then
			[[ ${sub[0]} == load || (${sub[0]} == clear && $COMP_CWORD == $((i + 2))) ]] &&
				mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		elif ((COMP_CWORD == i + 1)); then
			mapfile -t COMPREPLY < <(compgen -W "$(_xdpban_pick key)" -- "$cur")
		fi
		;;
	set)
		((COMP_CWORD == i + 1)) &&
			mapfile -t COMPREPLY < <(compgen -W "$(_xdpban_pick key)" -- "$cur")
		;;
	unban)
		((COMP_CWORD == i + 1)) &&
			mapfile -t COMPREPLY < <(compgen -W \
				"$("$prog" "${globals[@]}" bans 2>/dev/null | awk 'NR > 1 && $1 != "no" { print $1 }')" \
				-- "$cur")
		;;
	esac
	return 0
}

_xdpband() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} words metavar
	COMPREPLY=()
	if [[ $prev == -* ]]; then
		metavar=$(_xdpban_metavar "${COMP_WORDS[0]}" --help -- "$prev")
		if [[ -n $metavar ]]; then
			_xdpban_value_of "$metavar"
			return 0
		fi
	fi
	words=$(_xdpban_help_words "${COMP_WORDS[0]}" --help)
	mapfile -t COMPREPLY < <(compgen -W "$(_xdpban_pick option)" -- "$cur")
	return 0
}

complete -F _xdpban xdpban
complete -F _xdpband xdpband
