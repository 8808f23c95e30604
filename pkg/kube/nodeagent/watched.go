package nodeagent

import "strings"

// watchedExists answers the pods' existence questions (podplan.Env.Exists,
// which a remembered pod's mapping asks again at every reconcile) from the
// cgroup watch where it can, and asks look elsewhere: a pod's directory
// watched for its children, and a container's directory in one, are known to
// exist or not from the watch's events alone (cgwatch.Watch.Exists), where
// look is one lstat each, two per pod and reconcile under a churn. A
// directory not watched yet (a new pod, before addUnlisted watched it), one
// whose listing is stale after an event, or all of them once events were lost
// or without inotify, are looked at as before. The pods' directories are
// those addUnlisted resolved through the cgroup hierarchy at the last
// reconcile (podDirs): nothing here resolves a path from a pod's text. A
// change is seen once its event arrived; until then the answer is the one
// before it, as a look a moment earlier would have given, and the writer
// finds a cgroup gone by then before writing to it.
func (s *Source) watchedExists(look func(rel string) bool) func(rel string) bool {
	if s.cgw == nil || len(s.podDirs) == 0 {
		return look
	}
	return func(rel string) bool {
		if dir, ok := s.podDirs[rel]; ok {
			if exists, known := s.cgw.Exists(dir); known {
				return exists
			}
			return look(rel)
		}
		if i := strings.LastIndexByte(rel, '/'); i > 0 {
			if dir, ok := s.podDirs[rel[:i]]; ok {
				if exists, known := s.cgw.Exists(dir + rel[i:]); known {
					return exists
				}
			}
		}
		return look(rel)
	}
}
