// Package numad is numad's command line as libvirt and operators use it,
// for Locus's numad-compatible entry point (`locus numad`, or `locus`
// installed as `numad`). libvirt runs `numad -w VCPUS:MB` for a domain whose
// vCPUs or memory say placement='auto' and reads the node list it prints;
// Parse reads that command line exactly as numad 20150602 does (getopt over
// numad's option letters, its -w grammar, its messages and exit statuses),
// and says what to print when it is not a question Locus answers. The answer
// itself is pkg/balancer's Advise; Available narrows what it advises on to
// what the running agent has not pinned. Pure: no I/O.
package numad

import (
	"errors"
	"fmt"
	"strings"
)

// Release is the numad release whose command line this follows: the one
// Debian and RHEL ship.
const Release = "20150602"

// optArg says which of numad's option letters take an argument (its getopt
// string "C:dD:hH:i:K:l:m:p:r:R:S:t:u:vVw:x:").
var optArg = map[byte]bool{
	'C': true, 'd': false, 'D': true, 'h': false, 'H': true, 'i': true, 'K': true, 'l': true,
	'm': true, 'p': true, 'r': true, 'R': true, 'S': true, 't': true, 'u': true, 'v': false, 'V': false,
	'w': true, 'x': true,
}

// logOnly are the options that only change what numad logs (and -D, which
// numad ignores): with -w they change nothing numad answers, so they are
// accepted and ignored.
var logOnly = map[byte]bool{'d': true, 'D': true, 'l': true, 'v': true}

// Invocation is what a numad command line asks.
type Invocation struct {
	// Query is the -w question to answer; nil when the command line is
	// answered by Stdout, Stderr and Exit alone.
	Query *Query
	// Stdout and Stderr are printed as they are; Exit is the status.
	Stdout, Stderr string
	Exit           int
}

// MaxArgs bounds the command line read: numad's is a handful of options.
const MaxArgs = 64

// Parse reads numad's command line (without argv[0]); prog is the name the
// messages carry, argv[0] as numad prints it. Options are read in order, as
// getopt does: -h and -V answer at once, a malformed option or -w value
// fails at once; operands left over fail after the options. What numad
// would do as a daemon (no -w, or -w with an option that steers the daemon
// or its advice) is not supported: the Locus agent is the daemon.
func Parse(prog string, args []string) Invocation {
	if len(args) > MaxArgs {
		return failure(fmt.Sprintf("%s: %d arguments, more than %d\n", prog, len(args), MaxArgs))
	}
	var query *Query
	var operands []string
	unsupported := ""
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			operands = append(operands, args[i+1:]...)
			break
		}
		if len(arg) < 2 || arg[0] != '-' {
			operands = append(operands, arg) // getopt permutes operands to the end
			continue
		}
		for j := 1; j < len(arg); j++ {
			c := arg[j]
			takes, known := optArg[c]
			if !known {
				return usageFailure(prog, fmt.Sprintf("%s: invalid option -- '%s'\n", prog, optionText(c)))
			}
			var value string
			if takes {
				switch {
				case j+1 < len(arg):
					value = arg[j+1:]
				case i+1 < len(args):
					i++
					value = args[i]
				default:
					return usageFailure(prog, fmt.Sprintf("%s: option requires an argument -- '%c'\n", prog, c))
				}
			}
			switch c {
			case 'h':
				return Invocation{Stderr: Usage(prog), Exit: 1}
			case 'V':
				return Invocation{Stdout: fmt.Sprintf("%s version: %s: Locus's numad entry point\n", prog, Release)}
			case 'w':
				q, err := ParseQuery(value)
				var numadOwn cantParseError
				switch {
				case errors.As(err, &numadOwn):
					return failure(err.Error() + "\n") // numad's line, as numad prints it
				case err != nil:
					return failure(prog + ": " + err.Error() + "\n")
				}
				query = &q
			default:
				if !logOnly[c] && unsupported == "" {
					unsupported = "-" + string(c)
				}
			}
			if takes {
				break // the rest of the word was the value
			}
		}
	}
	if len(operands) > 0 {
		return failure(fmt.Sprintf("Unexpected arg = %s\n", quoteOperand(operands[0])))
	}
	if unsupported != "" {
		return failure(fmt.Sprintf("%s: %s is not supported by locus numad: use the locus agent (its --numa-balancer places running VMs and processes); locus numad answers -w only\n", prog, unsupported))
	}
	if query == nil {
		return failure(fmt.Sprintf("%s: running numad as a daemon is not supported by locus numad: use the locus agent (its --numa-balancer places running VMs and processes); locus numad answers -w only\n", prog))
	}
	return Invocation{Query: query}
}

func failure(stderr string) Invocation { return Invocation{Stderr: stderr, Exit: 1} }

// usageFailure is getopt's complaint followed by the usage, as numad
// prints them for an option it does not know or one missing its value.
func usageFailure(prog, complaint string) Invocation {
	return Invocation{Stderr: complaint + Usage(prog), Exit: 1}
}

// optionText is an unknown option letter as a message may show it: a
// control or non-ASCII byte is escaped rather than written raw.
func optionText(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return string(c)
	}
	return fmt.Sprintf("\\x%02x", c)
}

// quoteOperand repeats a stray operand as numad does, cut short so a huge
// argument does not make a huge message.
func quoteOperand(s string) string {
	const keep = 64
	if len(s) > keep {
		return fmt.Sprintf("%q... (%d bytes)", s[:keep], len(s))
	}
	if strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Sprintf("%q", s)
	}
	return s
}

// Usage is the help numad prints for -h and after a malformed option: the
// options it reads, and which of them Locus answers.
func Usage(prog string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s <options> ...\n", prog)
	b.WriteString(`-w <CPUs>[:<MBs>] for NUMA node suggestions (answered by Locus's advice)
-h to print this usage info
-V to show version info
-d, -v, -l <N> and -D are accepted with -w and change nothing
-C, -H, -i, -K, -m, -p, -r, -R, -S, -t, -u and -x steer the numad daemon:
   not supported by locus numad; the locus agent places running VMs and processes
`)
	return b.String()
}
