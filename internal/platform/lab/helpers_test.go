package lab

import (
	"crypto/rand"
	"encoding/hex"
)

// testPrefix is a lab prefix no other test or helper uses.
func testPrefix() string {
	b := make([]byte, 2)
	_, _ = rand.Read(b)
	return "mbt" + hex.EncodeToString(b)
}
