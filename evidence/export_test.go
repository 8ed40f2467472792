package evidence

// PreUnitsSplit is Split as it was before the units (040ebf1): prose
// sentences only, for the tests that check a text whose structures are off
// splits as it did.
func PreUnitsSplit(text string) Units { return splitProse(text, true) }
