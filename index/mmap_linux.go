package index

import "golang.org/x/sys/unix"

// mapPopulate pre-faults the mapping in one call: opening reads every page
// for the checksum anyway.
const mapPopulate = unix.MAP_POPULATE
