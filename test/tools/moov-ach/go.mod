module financial-platform/moov-ach

go 1.26.8

require github.com/moov-io/ach v1.46.0

require (
	github.com/igrmk/treemap/v2 v2.0.1 // indirect
	github.com/moov-io/base v0.53.0 // indirect
	github.com/moov-io/iso3166 v0.2.1 // indirect
	github.com/moov-io/iso4217 v0.3.2 // indirect
	github.com/rickar/cal/v2 v2.1.19 // indirect
	golang.org/x/exp v0.0.0-20240707233637-46b078467d37 // indirect
	golang.org/x/net v0.35.0 // indirect
	golang.org/x/sync v0.11.0 // indirect
	golang.org/x/text v0.22.0 // indirect
)
