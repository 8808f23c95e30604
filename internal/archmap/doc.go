// Package archmap keeps docs/architecture.md, the map of where each change
// goes, true to the code: every package is on it, and every package path,
// qualified Go name and test it names exists. It has tests only.
package archmap
