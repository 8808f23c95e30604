package kubelet

import (
	"io/fs"
	"strconv"
	"syscall"
)

// inode tells a file replaced by rename (as the kubelet writes its
// checkpoints) from the same file, even within one modification time tick.
func inode(st fs.FileInfo) string {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return strconv.FormatUint(s.Ino, 10)
	}
	return ""
}
