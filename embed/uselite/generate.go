package uselite

// Regenerate model/ (needs npm and network access to the npm registry; the
// tarball's sha512 is checked against the pinned npm integrity):
//
//go:generate go run ./internal/fetchmodel -out model
