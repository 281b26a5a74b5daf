# huddle.bash -- bash completion for huddle(1).
#
# Source it (or install it as bash-completion's completions/huddle). The
# candidates come from the binary itself, `huddle complete -- WORD...`,
# which answers from the same tables `huddle --help` prints: commands,
# subcommands, options, and team and agent ids read from the store of the
# home named on the line (--home DIR), else of $HUDDLE_HOME, else
# ~/.huddle. One process per TAB. (HUDDLE_HOME=DIR typed before the
# command is not seen: bash 5.2 leaves such assignments out of COMP_LINE
# and COMP_WORDS; zsh's completion sees it.)

_huddle() {
	local cur=${COMP_WORDS[COMP_CWORD]} words=() i w exe out
	COMPREPLY=()
	# Rejoin what COMP_WORDBREAKS split: --home=DIR comes as --home = DIR.
	for ((i = 1; i <= COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [[ $w == "=" && ${#words[@]} -gt 0 && ${words[-1]} == --* ]]; then
			words[-1]+="="
			continue
		fi
		if [[ ${#words[@]} -gt 0 && ${words[-1]} == --*= && $i -gt 1 &&
			${COMP_WORDS[i - 1]} == "=" ]]; then
			words[-1]+=$w
			continue
		fi
		[[ $w == "~/"* ]] && w=$HOME/${w#"~/"}
		words+=("$w")
	done
	[[ $COMP_CWORD -eq 0 ]] && return 0
	exe=${COMP_WORDS[0]}
	[[ $exe == "~/"* ]] && exe=$HOME/${exe#"~/"}
	[[ ${words[-1]} == --*=* ]] && cur=${words[-1]#*=}
	out=$("$exe" complete -- "${words[@]}" 2>/dev/null)
	case $out in
	:dir) mapfile -t COMPREPLY < <(compgen -d -- "$cur"); compopt -o filenames 2>/dev/null ;;
	:file) mapfile -t COMPREPLY < <(compgen -f -- "$cur"); compopt -o filenames 2>/dev/null ;;
	*) [[ -n $out ]] && mapfile -t COMPREPLY <<<"$out" ;;
	esac
	return 0
}
complete -F _huddle huddle
