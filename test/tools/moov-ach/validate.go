package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/moov-io/ach"
)

// validate prints what moov's reader and Validate() say of each file; 1 when any fails.
func validate(paths []string) int {
	status := 0
	for _, path := range paths {
		result := map[string]any{"file": path}
		f, err := os.Open(path)
		if err != nil {
			fail(err)
		}
		file, err := ach.NewReader(f).Read()
		f.Close()
		if err == nil {
			err = file.Validate()
		}
		if err != nil {
			status = 1
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
	return status
}
