package main

// powershellCompletion completes as the other scripts do, asking mcpshim
// help COMMAND for flags. A completer that returns nothing leaves PowerShell
// to complete file names. It has not been run in PowerShell here (none on
// the build machine): its test checks what it names.
const powershellCompletion = `# PowerShell completion for mcpshim: mcpshim completion powershell | Out-String | Invoke-Expression
# (add that line to $PROFILE to keep it)
Register-ArgumentCompleter -Native -CommandName mcpshim, mcpshim.exe -ScriptBlock {
	param($wordToComplete, $commandAst, $cursorPosition)
	$words = @($commandAst.CommandElements | Where-Object { $_.Extent.EndOffset -le $cursorPosition } | ForEach-Object { $_.ToString() })
	if ($wordToComplete -ne '' -and $words.Count -gt 1 -and $words[-1] -eq $wordToComplete) {
		$words = $words[0..($words.Count - 2)]
	}
	if ($words -contains '--') {
		Get-Command -Name "$wordToComplete*" -CommandType Application | ForEach-Object {
			[System.Management.Automation.CompletionResult]::new($_.Name, $_.Name, 'Command', $_.Name)
		}
		return
	}
	$cmd = $words[0]
	$sub = if ($words.Count -gt 1) { $words[1] } else { '' }
	$ledger = '@LEDGER@' -split ' '
	if ($wordToComplete -like '-*') {
		$ctx = @('help')
		if (@('ledger', 'probe', 'lock', 'wrap', 'unwrap', 'demo') -contains $sub) { $ctx += $sub }
		if ($sub -eq 'ledger' -and $words.Count -gt 2 -and $ledger -contains $words[2]) { $ctx += $words[2] }
		$candidates = & $cmd @ctx 2>$null | Select-String -Pattern '--[a-z][a-z0-9-]*' -AllMatches |
			ForEach-Object { $_.Matches.Value } | Sort-Object -Unique
	} elseif ($words.Count -eq 1 -or $sub -eq 'help') {
		$candidates = '@SUBCOMMANDS@' -split ' '
	} elseif ($sub -eq 'ledger' -and $words.Count -eq 2) {
		$candidates = $ledger
	} elseif ($sub -eq 'completion') {
		$candidates = @('bash', 'zsh', 'fish', 'powershell')
	} else {
		return
	}
	$candidates | Where-Object { $_ -like "$wordToComplete*" } | ForEach-Object {
		[System.Management.Automation.CompletionResult]::new($_, $_, 'ParameterValue', $_)
	}
}
`
