// Reads NACHA files with moov-io/ach (an implementation this project did not write) and runs its
// Validate() on each: one JSON line per file, the error moov reports or its batch and entry counts.
// Exit 1 when any file fails. Built by scripts/install-moov-ach.sh; used by test/harness/moov-ach.ts.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/moov-io/ach"
)

func main() {
	failed := false
	for _, path := range os.Args[1:] {
		result := map[string]any{"file": path}
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		file, err := ach.NewReader(f).Read()
		f.Close()
		if err == nil {
			err = file.Validate()
		}
		if err != nil {
			failed = true
			result["error"] = err.Error()
		} else {
			entries := 0
			for _, b := range file.Batches {
				entries += len(b.GetEntries())
			}
			result["batches"] = len(file.Batches)
			result["entries"] = entries
			result["returns"] = len(file.ReturnEntries)
			result["notifications_of_change"] = len(file.NotificationOfChange)
		}
		out, _ := json.Marshal(result)
		fmt.Println(string(out))
	}
	if failed {
		os.Exit(1)
	}
}
