module financial-platform/moov-bai2

go 1.26.8

require github.com/moov-io/bai2 v0.4.0
