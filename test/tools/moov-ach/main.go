// moov-io/ach, an implementation this project did not write, on the test's side of the bank:
//
//	moov-ach validate FILE...  reads each NACHA file and runs Validate(): one JSON line per file,
//	                           the error moov reports or its counts; exit 1 when any file fails.
//	moov-ach answer            writes the test bank's answer file (returns or notifications of
//	                           change) described by the JSON on stdin, with moov's writer, to stdout.
//
// Built by scripts/install-test-tool.sh moov-ach; used by test/harness/moov-ach.ts.
package main

import (
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: moov-ach validate FILE... | moov-ach answer < request.json")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "validate":
		os.Exit(validate(os.Args[2:]))
	case "answer":
		var request answerRequest
		if err := json.NewDecoder(os.Stdin).Decode(&request); err != nil {
			fail(err)
		}
		if err := writeAnswer(request, os.Stdout); err != nil {
			fail(err)
		}
	default:
		fail(fmt.Errorf("unknown command %q", os.Args[1]))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(2)
}
