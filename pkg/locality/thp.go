package locality

// Transparent huge pages move as one unit: move_pages(2) given any of the
// 512 base pages of a 2 MiB THP copies all 2 MiB, and answers EBUSY for the
// other base pages it is also given. Naming each base page of a THP therefore
// costs a call slot, an EBUSY and a status re-query per base page, and makes
// a batch of "256 pages" cost anything from 1 MiB to 512 MiB of copying. The
// migrator instead finds THP heads, names only them (one entry weighing 512
// base pages) and sizes their batches by bytes.
//
// A THP mapped by one page-table entry of the middle level starts at a
// 2 MiB-aligned virtual address, on a 512-aligned frame, and its base pages
// sit on consecutive frames; /proc/PID/pagemap shows those frames and
// /proc/kpageflags (both need CAP_SYS_ADMIN for frame numbers) confirms the
// frame is a THP head. Base pages that merely happen to be contiguous fail
// that confirmation.

// Bits of /proc/PID/pagemap and /proc/kpageflags words.
const (
	pagemapPresent  = 1 << 63
	pagemapPFNMask  = 1<<55 - 1
	kpfCompoundHead = 1 << 15
	kpfTHP          = 1 << 22
)

// thpHeads returns the indexes into entries of THP heads: entries[i] is the
// pagemap word of the base page at start+i*pageSize, and flags reads the
// kpageflags word of a frame (false when it cannot). Only whole THPs count:
// a head whose 512 base pages are not all in entries is left out, so its
// pages are named one by one as before.
func thpHeads(start uint64, entries []uint64, pageSize, hugeSize uint64, flags func(pfn uint64) (uint64, bool)) []int {
	per := hugeSize / pageSize
	if per <= 1 {
		return nil
	}
	var out []int
	first := (alignUp(start, hugeSize) - start) / pageSize
	for i := first; i+per <= uint64(len(entries)); i += per {
		head, last := entries[i], entries[i+per-1]
		pfn := head & pagemapPFNMask
		if head&pagemapPresent == 0 || last&pagemapPresent == 0 || pfn == 0 || pfn%per != 0 ||
			last&pagemapPFNMask != pfn+per-1 {
			continue
		}
		if f, ok := flags(pfn); ok && f&kpfTHP != 0 && f&kpfCompoundHead != 0 {
			out = append(out, int(i))
		}
	}
	return out
}

func alignUp(v, to uint64) uint64 { return (v + to - 1) / to * to }
