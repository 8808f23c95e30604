package stress

import (
	"encoding/binary"
	"fmt"
)

// The memory pattern is one 64-bit word per 8 bytes, derived from the seed
// and the word's index, so any word can be recomputed on its own: a failed
// checksum can then name the first corrupted offset.

const (
	golden = 0x9e3779b97f4a7c15 // 2^64 / phi, the splitmix64 increment
	// checksumPrime is odd, so multiplying by it is invertible modulo 2^64:
	// changing any single word always changes the checksum.
	checksumPrime = 0x100000001b3
	checksumBasis = 0xcbf29ce484222325
)

// Word is the pattern's value at word index i (bytes 8i..8i+7).
func Word(seed uint64, i int) uint64 {
	z := seed + uint64(i+1)*golden
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// Fill writes the pattern for seed into buf. A tail shorter than a word gets
// the leading bytes of the next word.
func Fill(buf []byte, seed uint64) {
	n := len(buf) / 8
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint64(buf[8*i:], Word(seed, i))
	}
	if tail := buf[8*n:]; len(tail) > 0 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], Word(seed, n))
		copy(tail, w[:])
	}
}

// Checksum folds buf word by word (h = h*prime + word). Cheap enough to run
// over gigabytes, and certain to change when any one word changes.
func Checksum(buf []byte) uint64 {
	h := uint64(checksumBasis)
	n := len(buf) / 8
	for i := 0; i < n; i++ {
		h = h*checksumPrime + binary.LittleEndian.Uint64(buf[8*i:])
	}
	for _, b := range buf[8*n:] {
		h = h*checksumPrime + uint64(b)
	}
	return h
}

// Corruption says where buf stopped matching the pattern.
type Corruption struct {
	Offset    int
	Want, Got byte
}

func (c *Corruption) Error() string {
	return fmt.Sprintf("memory corrupted at offset %d (%#x): want byte %#02x, got %#02x",
		c.Offset, c.Offset, c.Want, c.Got)
}

// FirstMismatch compares buf with the pattern for seed and returns the first
// differing byte, or nil when buf matches.
func FirstMismatch(buf []byte, seed uint64) *Corruption {
	var w [8]byte
	for i := 0; 8*i < len(buf); i++ {
		want := Word(seed, i)
		chunk := buf[8*i : min(8*i+8, len(buf))]
		if len(chunk) == 8 && binary.LittleEndian.Uint64(chunk) == want {
			continue
		}
		binary.LittleEndian.PutUint64(w[:], want)
		for j := range chunk {
			if chunk[j] != w[j] {
				return &Corruption{Offset: 8*i + j, Want: w[j], Got: chunk[j]}
			}
		}
	}
	return nil
}
