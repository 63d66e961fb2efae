// What `npm run cli -- --help` prints: every command of the admin CLI (src/cli/index.ts).

export const USAGE = `Usage: npm run cli -- <command>
  developers create --name NAME [--rate-limit N --daily-quota N] [--operators]
                                 --operators: the platform's operators (their keys reach /v0/reconciliation/…)
  developers allow-origins dev_… (--origin https://app.example … | --default)
                                 the browser origins the developer's publishable keys may be used
                                 from (CORS); --default: any in the sandbox, none in live
  keys create --developer dev_… --environment sandbox|production --kind secret|publishable
              [--permissions customers:read,…] [--plan sandbox|production|enterprise]
  keys revoke key_…
  kyc decide cus_… --decision approve|reject [--reason TEXT] [--operator NAME]
  customers suspend cus_… --reason TEXT [--operator NAME]
                                 freeze a customer: no new transfers, wallets or accounts; transfers
                                 whose funds arrive meanwhile are held in review
  customers reactivate cus_… [--operator NAME]
                                 lift the suspension (back to the status the customer had)
  transfers review tr_… --decision approve|reject [--note TEXT] [--operator NAME]
                                 decide a transfer held in review (production operator path)
  transfers retry-refund tr_… [--to-address ADDRESS | --external-account ext_…] [--operator NAME]
                                 try again a refund the source bank or chain rejected, or the
                                 source bank returned after it settled
                                 (to the source, or to another address or account of the customer)
  lists sync [--source ID …]     download the official sanctions lists into SANCTIONS_DATA_DIR
  lists sources                  the sources screened against
  ledger verify                  check that entries balance and cached balances match
  payments held                  held stray-deposit returns (a listed sender, a mint, a refused return)
  payments release pay_… [--to-address ADDRESS] [--note TEXT] [--operator NAME]
                                 send a held stray-deposit return after all (on a chain: or to another address)
  rail-events list               the fiat-rail provider's events that need an operator (money that
                                 names no transfer, returns too late, deliveries never handled)
  rail-events match EVENT_ID --transfer tr_… [--note TEXT] [--operator NAME]
                                 offer money that named no transfer to the one it was meant for
                                 (funds it if exactly as quoted and still awaited; else sent back)
  rail-events resolve EVENT_ID --note TEXT [--operator NAME]
                                 record how one was dealt with (sent back through the provider, say);
                                 the money it held leaves the ledger
  bank-files list                the latest files exchanged with the bank: what went out per window,
                                 what came back (returns, notifications of change, credits)
  bank-files show bfile_…        one file, and each payment in it with what became of it
  bank-files resend bfile_…      upload a file we sent again (same name and bytes), for a bank that lost it
  reconciliation run bfile_…     reconcile a statement the bank sent (BAI2 or camt.053) against the books,
                                 once; its matches and exceptions recorded
  reconciliation exceptions      the open exceptions, oldest first, with both sides
  reconciliation resolve rexc_… --decision match|write-off|investigate --reason TEXT [--counterpart rexc_…] [--operator NAME]
                                 match by hand (with its counterpart: both close), write off to the
                                 suspense account through the ledger, or mark under investigation
  reconciliation report [rday_…] a daily run's report as CSV (the latest by default)
  workflows stuck                running workflows with an activity that keeps failing past its alarm
                                 threshold (search attribute StuckActivity), with what the server
                                 knows of their activities' attempts and last failures
  data rotate-key                re-encrypt secrets and PII under DATA_ENCRYPTION_KEY (the old key
                                 in DATA_ENCRYPTION_PREVIOUS_KEYS); afterwards the old key can go
  keys rewrap                    seal every wallet key under WALLET_KEK (the earlier KEK in
                                 WALLET_KEK_PREVIOUS); afterwards the earlier KEK can go
  migrate
  temporal setup                 register the namespace and the search attributes on TEMPORAL_ADDRESS
                                 (a new Temporal cluster; waits up to 2 minutes for it; idempotent)`;
