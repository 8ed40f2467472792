package evidence

// PreUnitsSplit is Split as it was before the units (040ebf1): prose
// sentences only, for the tests that check a text whose structures are off
// splits as it did.
func PreUnitsSplit(text string) Units { return splitProse(text, true) }

// SplitUnitsAbove is SplitUnits as the selector splits a passage the
// source gave lines above (TextQuery.Above).
func SplitUnitsAbove(text string, on Structures, above string) Units {
	return splitUnits(text, on, tableAbove(above, text))
}

// AboveText is the lines above as they are sent.
func AboveText(above string) string { return aboveText(above) }
