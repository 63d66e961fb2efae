// moov-io/bai2, an implementation this project did not write, on the test's side of the bank:
//
//	moov-bai2 read FILE...  reads each BAI2 file and runs Validate(): one JSON line per file, the
//	                        error moov reports or the file as moov read it; exit 1 when any fails.
//
// Built by scripts/install-test-tool.sh moov-bai2; used by test/harness/moov-bai2.ts.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/moov-io/bai2/pkg/lib"
)

type result struct {
	File  string    `json:"file"`
	Error string    `json:"error,omitempty"`
	Bai2  *lib.Bai2 `json:"bai2,omitempty"`
}

func main() {
	if len(os.Args) < 3 || os.Args[1] != "read" {
		fmt.Fprintln(os.Stderr, "usage: moov-bai2 read FILE...")
		os.Exit(2)
	}
	failed := false
	out := json.NewEncoder(os.Stdout)
	for _, name := range os.Args[2:] {
		r := read(name)
		failed = failed || r.Error != ""
		if err := out.Encode(r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
	}
	if failed {
		os.Exit(1)
	}
}

func read(name string) result {
	fd, err := os.Open(name)
	if err != nil {
		return result{File: name, Error: err.Error()}
	}
	defer fd.Close()
	file := lib.NewBai2()
	scan := lib.NewBai2Scanner(fd)
	if err := file.Read(&scan); err != nil {
		return result{File: name, Error: err.Error()}
	}
	if err := file.Validate(); err != nil {
		return result{File: name, Error: err.Error()}
	}
	return result{File: name, Bai2: file}
}
