package main

import (
	"fmt"
	"io"
	"time"

	"github.com/moov-io/ach"
)

// answerRequest: the bank's answers to entries it took from the platform's files.
type answerRequest struct {
	Kind  string   `json:"kind"` // "return" or "notification_of_change"
	ODFI  odfi     `json:"odfi"`
	Items []answer `json:"items"`
}

type odfi struct {
	Routing     string `json:"routing"`
	Name        string `json:"name"`
	CompanyID   string `json:"companyId"`
	CompanyName string `json:"companyName"`
}

// answer: the original entry as the bank took it, and what the bank says of it.
type answer struct {
	TransactionCode int    `json:"transactionCode"`
	Routing         string `json:"routing"`
	Account         string `json:"account"`
	AmountMinor     int    `json:"amountMinor"`
	IDNumber        string `json:"idNumber"`
	Name            string `json:"name"`
	SecCode         string `json:"secCode"`
	Trace           string `json:"trace"`
	Code            string `json:"code"`
	CorrectedData   string `json:"correctedData"`
}

// writeAnswer writes a return file (each entry with an addenda 99) or a notification-of-change file
// (COR batches, addenda 98): one batch per SEC code, with moov's own builder and writer.
func writeAnswer(request answerRequest, out io.Writer) error {
	now := time.Now().UTC()
	fh := ach.NewFileHeader()
	fh.ImmediateDestination = request.ODFI.Routing
	fh.ImmediateOrigin = request.ODFI.Routing
	fh.FileCreationDate = now.Format("060102")
	fh.FileCreationTime = now.Format("1504")
	fh.ImmediateDestinationName = request.ODFI.CompanyName
	fh.ImmediateOriginName = request.ODFI.Name
	file := ach.NewFile()
	file.SetHeader(fh)
	notification := request.Kind == "notification_of_change"
	bySec := map[string][]answer{}
	var order []string
	for _, item := range request.Items {
		if _, seen := bySec[item.SecCode]; !seen {
			order = append(order, item.SecCode)
		}
		bySec[item.SecCode] = append(bySec[item.SecCode], item)
	}
	for i, sec := range order {
		batch, err := answerBatch(request.ODFI, sec, bySec[sec], notification, now, i+1)
		if err != nil {
			return err
		}
		file.AddBatch(batch)
	}
	if err := file.Create(); err != nil {
		return fmt.Errorf("file: %w", err)
	}
	return ach.NewWriter(out).Write(file)
}

func answerBatch(o odfi, sec string, items []answer, notification bool, now time.Time, number int) (ach.Batcher, error) {
	bh := ach.NewBatchHeader()
	bh.ServiceClassCode = ach.MixedDebitsAndCredits
	bh.CompanyName = o.CompanyName
	bh.CompanyIdentification = o.CompanyID
	bh.StandardEntryClassCode = sec
	bh.CompanyEntryDescription = "RETURN"
	if notification {
		bh.StandardEntryClassCode = ach.COR
		bh.CompanyEntryDescription = "NOC"
	}
	bh.EffectiveEntryDate = now.Format("060102")
	bh.ODFIIdentification = o.Routing[:8]
	bh.BatchNumber = number
	batch, err := ach.NewBatch(bh)
	if err != nil {
		return nil, fmt.Errorf("batch %s: %w", sec, err)
	}
	for i, item := range items {
		batch.AddEntry(answerEntry(o, item, notification, now, number*100_000+i+1))
	}
	if err := batch.Create(); err != nil {
		return nil, fmt.Errorf("batch %s: %w", sec, err)
	}
	return batch, nil
}

func answerEntry(o odfi, item answer, notification bool, now time.Time, sequence int) *ach.EntryDetail {
	entry := ach.NewEntryDetail()
	// The original's code with its last digit 1 (a credit's return or notification) or 6 (a debit's).
	wasCredit := item.TransactionCode%10 == 2
	entry.TransactionCode = item.TransactionCode - item.TransactionCode%10 + 6
	if wasCredit {
		entry.TransactionCode = item.TransactionCode - item.TransactionCode%10 + 1
	}
	entry.SetRDFI(item.Routing)
	entry.DFIAccountNumber = item.Account
	entry.IdentificationNumber = item.IDNumber
	entry.IndividualName = item.Name
	entry.SetTraceNumber(o.Routing[:8], sequence)
	entry.AddendaRecordIndicator = 1
	if notification {
		addenda := ach.NewAddenda98()
		addenda.ChangeCode = item.Code
		addenda.OriginalTrace = item.Trace
		addenda.OriginalDFI = item.Routing[:8]
		addenda.CorrectedData = item.CorrectedData
		addenda.TraceNumber = entry.TraceNumber
		entry.Addenda98 = addenda
		entry.Category = ach.CategoryNOC
		return entry
	}
	entry.Amount = item.AmountMinor
	addenda := ach.NewAddenda99()
	addenda.ReturnCode = item.Code
	addenda.OriginalTrace = item.Trace
	addenda.OriginalDFI = item.Routing[:8]
	addenda.TraceNumber = entry.TraceNumber
	entry.Addenda99 = addenda
	entry.Category = ach.CategoryReturn
	return entry
}
