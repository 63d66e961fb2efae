import { randomBytes } from 'node:crypto';
import type { z } from 'zod';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { AppDeps } from '../../api/context';
import type { Tenant } from '../../db/tenant-scope';
import { ApiError } from '../../errors';
import { parseRequestPart } from '../../api/route';
import { sha256Hex } from '../../crypto';
import { KycSubmissionInput, submitKyc } from '../../kyc/submissions';

/**
 * The hosted KYC page behind `kyc_link`. It needs no API key: the unguessable, expiring token in the
 * path is the credential, and it reaches only its own customer. It shows status, never PII.
 */
export function hostedKycRouter(deps: AppDeps) {
  const router = express.Router();

  async function customerForToken(token: string) {
    if (!/^[0-9A-Za-z]{20,100}$/.test(token)) return undefined;
    return deps.db
      .selectFrom('customers')
      .select(['id', 'developer_id', 'environment', 'type', 'kyc_status', 'status', 'incomplete_reasons', 'rejection_reasons'])
      .where('kyc_link_token_hash', '=', sha256Hex(token))
      .where('kyc_link_expires_at', '>', new Date())
      .where('status', '<>', 'deleted')
      .executeTakeFirst();
  }

  const wrap = (fn: (req: Request, res: Response) => Promise<void>) => (req: Request, res: Response, next: NextFunction) =>
    fn(req, res).catch(next);

  router.get('/:token', wrap(async (req, res) => {
    const customer = await customerForToken(String(req.params.token));
    const nonce = randomBytes(16).toString('base64');
    res.setHeader(
      'Content-Security-Policy',
      `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src data:; form-action 'none'; frame-ancestors 'none'`,
    );
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('Cache-Control', 'no-store');
    res.type('html');
    if (!customer) {
      res.status(404).send(page(nonce, '<h1>Link not valid</h1><p id="status">This verification link is invalid or has expired. Ask for a new one.</p>', ''));
      return;
    }
    res.send(page(nonce, FORM, SCRIPT));
  }));

  router.get('/:token/status', wrap(async (req, res) => {
    const customer = await customerForToken(String(req.params.token));
    if (!customer) throw new ApiError('not_found', 'This verification link is invalid or has expired');
    res.setHeader('Cache-Control', 'no-store');
    res.json({
      kyc_status: customer.kyc_status,
      customer_type: customer.type,
      ...(customer.kyc_status === 'incomplete' ? { incomplete_reasons: customer.incomplete_reasons ?? [] } : {}),
      ...(customer.kyc_status === 'rejected' ? { rejection_reasons: customer.rejection_reasons ?? [] } : {}),
    });
  }));

  router.post('/:token/submit', wrap(async (req, res) => {
    const customer = await customerForToken(String(req.params.token));
    if (!customer) throw new ApiError('not_found', 'This verification link is invalid or has expired');
    const submission: z.output<typeof KycSubmissionInput> = parseRequestPart(KycSubmissionInput, req.body, 'body');
    if (submission.beneficial_owners) {
      throw new ApiError('invalid_request', 'Beneficial owners are submitted through the API', { location: 'body', key: 'beneficial_owners' });
    }
    const tenant: Tenant = { developerId: customer.developer_id, environment: customer.environment };
    const updated = await submitKyc(deps, tenant, customer.id, submission, 'hosted_page');
    res.status(202).json({ kyc_status: updated.kyc_status });
  }));

  return router;
}

function page(nonce: string, body: string, script: string) {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Identity verification</title>
<style nonce="${nonce}">
body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1a1a2e}
label{display:block;margin:1rem 0 .3rem;font-weight:600}select,input,button{font-size:1rem;display:block}
button{margin-top:1.5rem;padding:.6rem 1.4rem;background:#2d3a8c;color:#fff;border:0;border-radius:.4rem;cursor:pointer}
button[disabled]{opacity:.5}#error{color:#b00020;margin-top:1rem}#status{margin-top:1.5rem;font-size:1.1rem}
.hidden{display:none}
</style></head>
<body>${body}${script ? `<script nonce="${nonce}">${script}</script>` : ''}</body></html>`;
}

const FORM = `
<h1>Verify your identity</h1>
<p>Upload a photo of an identity document and a selfie. Images: JPEG, PNG or WebP, up to 5 MB each.</p>
<form id="kyc-form" class="hidden">
  <label for="document_type">Document type</label>
  <select id="document_type" name="document_type">
    <option value="passport">Passport</option>
    <option value="drivers_license">Driver's license</option>
    <option value="national_id">National ID card</option>
  </select>
  <label for="document_front">Front of the document</label>
  <input id="document_front" name="document_front" type="file" accept="image/jpeg,image/png,image/webp" required>
  <label for="selfie">Selfie</label>
  <input id="selfie" name="selfie" type="file" accept="image/jpeg,image/png,image/webp" required>
  <button id="submit" type="submit">Submit</button>
</form>
<div id="error" role="alert"></div>
<div id="status" aria-live="polite">Loading…</div>`;

const SCRIPT = `
(function () {
  var base = location.pathname.replace(/\\/$/, '');
  var form = document.getElementById('kyc-form');
  var statusEl = document.getElementById('status');
  var errorEl = document.getElementById('error');
  var OPEN = ['not_started', 'pending', 'incomplete'];
  var FINAL = ['approved', 'rejected'];
  var TEXT = {
    not_started: 'Waiting for your documents.', pending: 'Waiting for your documents.',
    incomplete: 'More information is needed.', under_review: 'We are reviewing your documents…',
    manual_review: 'Your documents are being reviewed by our compliance team.',
    awaiting_ubo: 'We need information about the beneficial owners of your business; your provider will ask for it.',
    approved: 'Your identity is verified.', rejected: 'We could not verify your identity.'
  };
  var timer;
  function show(s) {
    statusEl.textContent = 'Status: ' + s.kyc_status + ' — ' + (TEXT[s.kyc_status] || '') +
      (s.incomplete_reasons ? ' (' + s.incomplete_reasons.join(', ') + ')' : '');
    statusEl.setAttribute('data-kyc-status', s.kyc_status);
    form.classList.toggle('hidden', OPEN.indexOf(s.kyc_status) < 0);
    if (FINAL.indexOf(s.kyc_status) >= 0 && timer) { clearInterval(timer); timer = undefined; }
  }
  function refresh() {
    return fetch(base + '/status').then(function (r) { return r.json(); }).then(function (s) {
      if (s.kyc_status) show(s); else statusEl.textContent = s.error ? s.error.message : 'Unknown status';
    });
  }
  function readFile(input) {
    return new Promise(function (resolve, reject) {
      var file = input.files[0];
      if (!file) return reject(new Error('Choose a file for ' + input.name));
      var reader = new FileReader();
      reader.onload = function () { resolve(reader.result); };
      reader.onerror = function () { reject(new Error('Could not read ' + file.name)); };
      reader.readAsDataURL(file);
    });
  }
  form.addEventListener('submit', function (e) {
    e.preventDefault();
    errorEl.textContent = '';
    var button = document.getElementById('submit');
    button.disabled = true;
    Promise.all([readFile(document.getElementById('document_front')), readFile(document.getElementById('selfie'))])
      .then(function (images) {
        return fetch(base + '/submit', {
          method: 'POST', headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ document_type: document.getElementById('document_type').value, document_front: images[0], selfie: images[1] })
        });
      })
      .then(function (r) { return r.json().then(function (b) { if (!r.ok) throw new Error(b.error ? b.error.message : 'Submission failed'); }); })
      .then(function () { form.reset(); if (!timer) timer = setInterval(refresh, 1000); return refresh(); })
      .catch(function (err) { errorEl.textContent = err.message; })
      .then(function () { button.disabled = false; });
  });
  refresh().then(function () { timer = setInterval(refresh, 1000); });
})();`;
