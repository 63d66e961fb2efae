
// The two addenda records a bank sends back that the NACHA library does not define: the return
// (type 99) and the notification of change (type 98), in the library's own table shape (name, width,
// position, type) so that one reader and one writer serve every record (Nacha Operating Rules,
// Appendix Four and Five). Both are 94 characters, like every record.

/** One record's fields by name, as read (trimmed) or to be written. */
export type AchRecord = Record<string, string>;

export interface FieldSpec {
  name: string;
  width: number;
  position: number;
  type: 'numeric' | 'alphanumeric';
  value?: string;
}
export type FieldTable = Record<string, FieldSpec>;

export const RETURN_ADDENDA_FIELDS: FieldTable = {
  recordTypeCode: { name: 'Record Type Code', width: 1, position: 1, type: 'numeric', value: '7' },
  addendaTypeCode: { name: 'Addenda Type Code', width: 2, position: 2, type: 'numeric', value: '99' },
  returnReasonCode: { name: 'Return Reason Code', width: 3, position: 3, type: 'alphanumeric' },
  originalEntryTraceNumber: { name: 'Original Entry Trace Number', width: 15, position: 4, type: 'numeric' },
  dateOfDeath: { name: 'Date of Death', width: 6, position: 5, type: 'alphanumeric', value: '' },
  originalReceivingDFI: { name: 'Original Receiving DFI Identification', width: 8, position: 6, type: 'numeric' },
  addendaInformation: { name: 'Addenda Information', width: 44, position: 7, type: 'alphanumeric', value: '' },
  traceNumber: { name: 'Trace Number', width: 15, position: 8, type: 'numeric' },
};

export const NOC_ADDENDA_FIELDS: FieldTable = {
  recordTypeCode: { name: 'Record Type Code', width: 1, position: 1, type: 'numeric', value: '7' },
  addendaTypeCode: { name: 'Addenda Type Code', width: 2, position: 2, type: 'numeric', value: '98' },
  changeCode: { name: 'Change Code', width: 3, position: 3, type: 'alphanumeric' },
  originalEntryTraceNumber: { name: 'Original Entry Trace Number', width: 15, position: 4, type: 'numeric' },
  reserved: { name: 'Reserved', width: 6, position: 5, type: 'alphanumeric', value: '' },
  originalReceivingDFI: { name: 'Original Receiving DFI Identification', width: 8, position: 6, type: 'numeric' },
  correctedData: { name: 'Corrected Data', width: 29, position: 7, type: 'alphanumeric' },
  reservedTail: { name: 'Reserved', width: 15, position: 8, type: 'alphanumeric', value: '' },
  traceNumber: { name: 'Trace Number', width: 15, position: 9, type: 'numeric' },
};

/**
 * One record from a field table and values (a field's `value` is its default), padded as the library
 * pads: alphanumeric and blank fields with spaces on the right, the others on the left with their
 * padding character (zeros by default). A value wider than its field is refused, never cut.
 */
export function writeRecord(
  fields: Record<string, { width: number; position: number; type?: string; value?: string; blank?: boolean; paddingChar?: string }>,
  values: AchRecord,
): string {
  let out = '';
  for (const [key, field] of Object.entries(fields).sort(([, a], [, b]) => a.position - b.position)) {
    const value = String(values[key] ?? field.value ?? '');
    if (value.length > field.width) throw new Error(`${key}: '${value}' is wider than its ${field.width} characters`);
    out += field.blank || field.type === 'alphanumeric' ? value.padEnd(field.width, ' ') : value.padStart(field.width, field.paddingChar ?? '0');
  }
  if (out.length !== 94) throw new Error(`a record of ${out.length} characters, not 94`);
  return out;
}
