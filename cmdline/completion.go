package cmdline

import (
	"regexp"
	"strings"
	"sync"
)

// Directives a completion's first line may be instead of candidates: the
// shell completes file names, or command names (the server's, after --).
const (
	CompleteFiles    = ":files"
	CompleteCommands = ":commands"
)

// Shells are the shells Script writes for.
var Shells = []string{"bash", "zsh", "fish", "powershell"}

// Script is shell's completion script. On Tab it asks the installed mcpshim
// what fits (mcpshim __complete, from the flags its own --help lists, their
// values and the ledger's run ids), so it cannot drift from the binary; a
// first line CompleteFiles or CompleteCommands hands the word to the
// shell's own file or command completion.
func Script(shell string) (string, bool) {
	s, ok := map[string]string{"bash": bashCompletion, "zsh": zshCompletion, "fish": fishCompletion, "powershell": powershellCompletion}[shell]
	return s, ok
}

// flagLine is a flag as usage text lists it: "  --timeout DURATION" or
// "  --config FILE    the config"; a value name is upper case or a Go type.
// Compiled on first use: a shim never completes, and it starts sooner.
var flagLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^\s+--?([a-z][a-z0-9-]*)(?: ([A-Z][A-Z_|]*|string|int|int64|uint|uint64|float64|duration|value)\b)?`)
})

// FlagsOfUsage reads the flags a usage text lists, as --help prints it:
// name -> whether it takes a value.
func FlagsOfUsage(usage string) map[string]bool {
	flags := map[string]bool{}
	for _, m := range flagLine().FindAllStringSubmatch(usage, -1) {
		flags[m[1]] = flags[m[1]] || m[2] != ""
	}
	return flags
}

// Positionals counts the positional words of rest, skipping flags and the
// values of those that take one (flags: name -> takes a value).
func Positionals(rest []string, flags map[string]bool) int {
	pos := 0
	for i := 0; i < len(rest); i++ {
		if strings.HasPrefix(rest[i], "-") {
			if flags[strings.TrimLeft(rest[i], "-")] && !strings.Contains(rest[i], "=") {
				i++
			}
			continue
		}
		pos++
	}
	return pos
}

const bashCompletion = `# bash completion for mcpshim: source <(mcpshim completion bash)
_mcpshim() {
	local cur=${COMP_WORDS[COMP_CWORD]} IFS=$'\n' out
	out=($("${COMP_WORDS[0]}" __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
	case ${out[0]} in
	:files) COMPREPLY=($(compgen -f -- "$cur")) ;;
	:commands) COMPREPLY=($(compgen -c -- "$cur" | sort -u)) ;;
	*) COMPREPLY=($(compgen -W "${out[*]}" -- "$cur")) ;;
	esac
}
complete -F _mcpshim mcpshim
`

const zshCompletion = `#compdef mcpshim
# zsh completion for mcpshim: source <(mcpshim completion zsh), after compinit
_mcpshim() {
	local -a out
	out=(${(f)"$(${words[1]} __complete "${(@)words[2,CURRENT]}" 2>/dev/null)"})
	case $out[1] in
	:files) _files ;;
	:commands) _command_names -e ;;
	*) compadd -- $out ;;
	esac
}
if (( $+functions[compdef] )); then
	compdef _mcpshim mcpshim
fi
`

const fishCompletion = `# fish completion for mcpshim: mcpshim completion fish > ~/.config/fish/completions/mcpshim.fish
function __mcpshim_complete
	set -l tokens (commandline -opc)
	set -l cur (commandline -ct)
	set -l out ($tokens[1] __complete $tokens[2..-1] "$cur" 2>/dev/null)
	switch "$out[1]"
	case :files
		__fish_complete_path "$cur"
	case :commands
		__fish_complete_command
	case '*'
		string join \n -- $out
	end
end
complete -c mcpshim -f -a '(__mcpshim_complete)'
`
