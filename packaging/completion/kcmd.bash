# bash completion for kcmd and kcmctl (install as /usr/share/bash-completion/completions/kcmd,
# with kcmctl a symlink to it). kcmd's flags and controller names are read from `kcmd --help`
# of the kcmd being completed, so plug-ins' and new controllers' flags complete too.

_kcmd_help() {
	"${1:-kcmd}" --help 2>/dev/null
}

_kcmd() {
	local cur=${COMP_WORDS[COMP_CWORD]} prog=${COMP_WORDS[0]}
	case $cur in
	--controllers=*)
		local pre=${cur#--controllers=} last names
		last=${pre##*,}
		pre=${pre%"$last"}
		names=$(_kcmd_help "$prog" | awk '/^Controllers /{c=1; next} c && /^  [a-z]/{print $1; next} c {exit}')
		local w
		COMPREPLY=()
		for w in '*' $names; do
			[[ $w == "${last#-}"* ]] && COMPREPLY+=("${pre}${last%%[!-]*}$w")
		done
		return
		;;
	--logging-format=*)
		COMPREPLY=($(compgen -W "text json" -- "${cur#*=}"))
		return
		;;
	--kubeconfig=* | --authentication-kubeconfig=* | --authorization-kubeconfig=* | --tls-*-file=* | --client-ca-file=* | --controller-plugins=*)
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -- "${cur#*=}"))
		return
		;;
	-*)
		local flags
		flags=$(_kcmd_help "$prog" | grep -oE '^  --[a-z][a-z0-9-]*' | tr -d ' ')
		COMPREPLY=($(compgen -W "$flags" -- "$cur"))
		if [[ ${#COMPREPLY[@]} == 1 && ${COMPREPLY[0]} != --help && ${COMPREPLY[0]} != --version ]]; then
			COMPREPLY=("${COMPREPLY[0]}=")
			compopt -o nospace 2>/dev/null || true
		fi
		return
		;;
	esac
}

_kcmctl() {
	local cur=${COMP_WORDS[COMP_CWORD]} i cmd= sub=
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--pid) ((i++)) ;;
		-*) ;;
		*) if [[ -z $cmd ]]; then cmd=${COMP_WORDS[i]}; elif [[ -z $sub ]]; then sub=${COMP_WORDS[i]}; fi ;;
		esac
	done
	[[ ${COMP_WORDS[COMP_CWORD - 1]} == --pid ]] && {
		COMPREPLY=($(compgen -W "$(pgrep -x kcmd)" -- "$cur"))
		return
	}
	case $cmd in
	"") COMPREPLY=($(compgen -W "--pid cache queues parked status top new-controller" -- "$cur")) ;;
	cache) [[ -z $sub ]] && COMPREPLY=($(compgen -W "stats list get" -- "$cur")) ||
		COMPREPLY=($(compgen -W "-n --namespace --owner --uid" -- "$cur")) ;;
	top) COMPREPLY=($(compgen -W "--once -o --interval" -- "$cur"))
		[[ ${COMP_WORDS[COMP_CWORD - 1]} == -o ]] && COMPREPLY=($(compgen -W "json text" -- "$cur")) ;;
	new-controller) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")) ;;
	esac
}

complete -F _kcmd kcmd
complete -F _kcmctl kcmctl
