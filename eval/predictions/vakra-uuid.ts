import { FORMULATIONS } from '../../core/model.js';

/**
 * The uuid nl2api's VAKRA export gives a sample (export/vakra/records.ts): `<formulation>-<db>-<sample id>`,
 * stable across runs and distinct for SLOT's and SEL's of one question (VAKRA keeps both in one
 * domain file and one universe mapping). VAKRA's runner copies it into its predictions, so a
 * record is matched back to its item by it.
 */
export function vakraUuid(item: { formulation: string; db: string; id: string }): string {
  return `${item.formulation}-${item.db}-${item.id}`;
}

/** A uuid of another formulation's sample (a predictions folder of VAKRA's capability 1 holds SLOT's and SEL's). */
export function isOtherFormulationUuid(uuid: string, formulation: string): boolean {
  const match = new RegExp(`^(${FORMULATIONS.join('|')})-`).exec(uuid);
  return match !== null && match[1] !== formulation;
}
