package cmdline

// powershellCompletion asks mcpshim __complete, as the other scripts do; on
// :files it returns nothing, which leaves PowerShell to complete file names.
// Windows PowerShell 5.1 drops an empty argument on its way to a program, so
// an empty word is passed there as "". It has not been run in PowerShell
// here (none on the build machine): its test checks what it names.
const powershellCompletion = `# PowerShell completion for mcpshim: mcpshim completion powershell | Out-String | Invoke-Expression
# (add that line to $PROFILE to keep it)
Register-ArgumentCompleter -Native -CommandName mcpshim, mcpshim.exe -ScriptBlock {
	param($wordToComplete, $commandAst, $cursorPosition)
	$words = @($commandAst.CommandElements | Where-Object { $_.Extent.EndOffset -le $cursorPosition } | ForEach-Object { $_.ToString() })
	if ($wordToComplete -ne '' -and $words.Count -gt 1 -and $words[-1] -eq $wordToComplete) {
		$words = $words[0..($words.Count - 2)]
	}
	$cur = $wordToComplete
	if ($cur -eq '' -and $PSVersionTable.PSVersion.Major -lt 7) { $cur = '""' }
	$arguments = @('__complete') + @($words | Select-Object -Skip 1) + @($cur)
	$out = @(& $words[0] @arguments 2>$null)
	if ($out.Count -gt 0 -and $out[0] -eq ':files') { return }
	if ($out.Count -gt 0 -and $out[0] -eq ':commands') {
		Get-Command -Name "$wordToComplete*" -CommandType Application | ForEach-Object {
			[System.Management.Automation.CompletionResult]::new($_.Name, $_.Name, 'Command', $_.Name)
		}
		return
	}
	$out | Where-Object { $_ -like "$wordToComplete*" } | ForEach-Object {
		[System.Management.Automation.CompletionResult]::new($_, $_, 'ParameterValue', $_)
	}
}
`
