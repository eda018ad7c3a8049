package main

import (
	"fmt"
	"strings"
)

const completionUsage = `usage: mcpshim completion bash|zsh|fish|powershell

Prints a completion script for the shell:
  bash:  source <(mcpshim completion bash)         (or save it in ~/.local/share/bash-completion/completions/mcpshim)
  zsh:   source <(mcpshim completion zsh)          (after compinit; or save it as _mcpshim on your $fpath)
  fish:  mcpshim completion fish > ~/.config/fish/completions/mcpshim.fish
  powershell:  mcpshim completion powershell | Out-String | Invoke-Expression
               (add that line to $PROFILE to keep it)

Subcommands complete from the script; flags are read from mcpshim help
COMMAND when you press Tab, so they are always this mcpshim's own; after --
the server's command completes as a command.
`

// ledgerSubcommands are the words after "mcpshim ledger".
const ledgerSubcommands = "show why stats tail report prune export"

// The scripts ask the installed mcpshim for flags (mcpshim help CMD lists
// them as --name), so they cannot drift from the binary.
const bashCompletion = `# bash completion for mcpshim: source <(mcpshim completion bash)
_mcpshim() {
	local cur=${COMP_WORDS[COMP_CWORD]} cmd=${COMP_WORDS[0]} sub=${COMP_WORDS[1]} i words
	for ((i = 1; i < COMP_CWORD; i++)); do
		if [[ ${COMP_WORDS[i]} == -- ]]; then
			COMPREPLY=($(compgen -c -- "$cur"))
			return
		fi
	done
	if [[ $cur == -* ]]; then
		local ctx=(help)
		case $sub in
		ledger | probe | lock | wrap | unwrap | demo) ctx+=("$sub") ;;
		esac
		if [[ $sub == ledger && " @LEDGER@ " == *" ${COMP_WORDS[2]} "* ]] && ((COMP_CWORD > 2)); then
			ctx+=("${COMP_WORDS[2]}")
		fi
		words=$("$cmd" "${ctx[@]}" 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
	elif ((COMP_CWORD == 1)) || [[ $sub == help ]]; then
		words="@SUBCOMMANDS@"
	elif [[ $sub == ledger ]] && ((COMP_CWORD == 2)); then
		words="@LEDGER@"
	elif [[ $sub == completion ]]; then
		words="bash zsh fish powershell"
	else
		COMPREPLY=($(compgen -f -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _mcpshim mcpshim
`

const zshCompletion = `#compdef mcpshim
# zsh completion for mcpshim: source <(mcpshim completion zsh), after compinit
_mcpshim() {
	local cmd=${words[1]} sub=${words[2]} dash=${words[(i)--]}
	if (( dash < CURRENT )); then
		_command_names
		return
	fi
	if [[ $PREFIX == -* ]]; then
		local -a ctx
		ctx=(help)
		case $sub in
		ledger|probe|lock|wrap|unwrap|demo) ctx+=($sub) ;;
		esac
		if [[ $sub == ledger && " @LEDGER@ " == *" ${words[3]} "* ]] && (( CURRENT > 3 )); then
			ctx+=(${words[3]})
		fi
		compadd -- ${(u)${(f)"$($cmd $ctx 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]*')"}}
		return
	fi
	if (( CURRENT == 2 )) || [[ $sub == help ]]; then
		compadd -- @SUBCOMMANDS@
	elif [[ $sub == ledger ]] && (( CURRENT == 3 )); then
		compadd -- @LEDGER@
	elif [[ $sub == completion ]]; then
		compadd -- bash zsh fish powershell
	else
		_files
	fi
}
if (( $+functions[compdef] )); then
	compdef _mcpshim mcpshim
fi
`

const fishCompletion = `# fish completion for mcpshim: mcpshim completion fish > ~/.config/fish/completions/mcpshim.fish
function __mcpshim_flags
	set -l tokens (commandline -opc)
	set -l ctx help
	if test (count $tokens) -ge 2; and contains -- $tokens[2] ledger probe lock wrap unwrap demo
		set ctx help $tokens[2]
		if test $tokens[2] = ledger; and test (count $tokens) -ge 3; and contains -- $tokens[3] @LEDGER@
			set ctx $ctx $tokens[3]
		end
	end
	$tokens[1] $ctx 2>/dev/null | string match -r -a -- '--[a-z][a-z0-9-]*' | sort -u
end
complete -c mcpshim -f
complete -c mcpshim -n '__fish_use_subcommand' -a '@SUBCOMMANDS@'
complete -c mcpshim -n '__fish_seen_subcommand_from help' -a '@SUBCOMMANDS@'
complete -c mcpshim -n '__fish_seen_subcommand_from ledger; and not __fish_seen_subcommand_from @LEDGER@' -a '@LEDGER@'
complete -c mcpshim -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish powershell'
complete -c mcpshim -n 'string match -q -- "-*" (commandline -ct)' -a '(__mcpshim_flags)'
complete -c mcpshim -n '__fish_seen_subcommand_from ledger probe lock wrap unwrap' -F
`

// runCompletion is `mcpshim completion SHELL`.
func runCompletion(c *cli, args []string) int {
	scripts := map[string]string{"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion, "powershell": powershellCompletion}
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprint(c.stdout, completionUsage)
		return 0
	}
	if len(args) != 1 || scripts[args[0]] == "" {
		if len(args) > 0 {
			fmt.Fprintf(c.stderr, "mcpshim completion: no shell %q%s\n", args[0], didYouMean(args[0], []string{"bash", "zsh", "fish", "powershell"}))
		}
		fmt.Fprint(c.stderr, completionUsage)
		return exitUsage
	}
	r := strings.NewReplacer("@SUBCOMMANDS@", strings.Join(subcommands, " "), "@LEDGER@", ledgerSubcommands)
	fmt.Fprint(c.stdout, r.Replace(scripts[args[0]]))
	return 0
}
