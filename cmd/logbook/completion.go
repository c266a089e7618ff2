package main

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-e5e476df/logbook/sdk"
)

func init() { commands = append(commands, newCompletionCmd) }

// completionShells are the shells `logbook completion` writes a script for,
// each with cobra's generator.
var completionShells = map[string]func(root *cobra.Command, a *app) error{
	"bash":       func(root *cobra.Command, a *app) error { return root.GenBashCompletionV2(a.stdout, true) },
	"zsh":        func(root *cobra.Command, a *app) error { return root.GenZshCompletion(a.stdout) },
	"fish":       func(root *cobra.Command, a *app) error { return root.GenFishCompletion(a.stdout, true) },
	"powershell": func(root *cobra.Command, a *app) error { return root.GenPowerShellCompletionWithDesc(a.stdout) },
}

// completionShellNames lists completionShells in the order help shows them.
const completionShellNames = "bash, zsh, fish, powershell"

func newCompletionCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print the shell completion script for bash, zsh, fish or PowerShell",
		Long: "completion prints a script that makes the shell complete logbook's commands and\n" +
			"flags. Load it in the current shell, or install it where the shell looks for\n" +
			"completions (see the examples).",
		Example: "  source <(logbook completion bash)                       # this bash session\n" +
			"  logbook completion bash > ~/.local/share/bash-completion/completions/logbook\n" +
			"  logbook completion zsh > \"${fpath[1]}/_logbook\"           # zsh, with compinit\n" +
			"  logbook completion fish > ~/.config/fish/completions/logbook.fish\n" +
			"  logbook completion powershell | Out-String | Invoke-Expression",
		ValidArgs: strings.Split(completionShellNames, ", "),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return sdk.Errorf(sdk.CodeUsage, "logbook", "completion takes one shell: %s", completionShellNames)
			}
			gen, ok := completionShells[args[0]]
			if !ok {
				return sdk.Errorf(sdk.CodeUsage, "logbook", "no completion for shell %q; the shells are %s", args[0], completionShellNames)
			}
			return gen(cmd.Root(), a)
		},
	}
}
