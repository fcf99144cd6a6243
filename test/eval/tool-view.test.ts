import type { ToolSpec } from '../../core/model.js';
import { toolView } from '../../eval/tool-view.js';

/** --obfuscate hides argument names inside nested schemas and objects too (an order item's key_name). */
describe('the obfuscated view', () => {
  const tools: ToolSpec[] = [
    {
      type: 'function',
      function: {
        name: 'transform_data',
        description: 'Computes from key_name.',
        parameters: {
          type: 'object',
          properties: {
            key_name: { type: 'string', description: 'The column.' },
            operation_args: {
              type: 'object',
              properties: {
                order_by: {
                  type: 'array',
                  items: {
                    type: 'object',
                    properties: { key_name: { type: 'string', enum: ['key_name'] }, ascending: { type: 'boolean' } },
                    required: ['key_name'],
                  },
                },
              },
            },
          },
          required: ['key_name'],
        },
      },
    },
  ];
  const view = toolView(tools, [], 'item', { obfuscate: true, shortlist: 100 });

  test('renames nested property names, keeps enum values, and maps a call both ways', () => {
    const shown = JSON.stringify(view.tools);
    expect(shown).not.toMatch(/"key_name":|"required":\["key_name"\]|transform_data/);
    expect(shown).toContain('"enum":["key_name"]');
    const call = {
      name: 'transform_data',
      label: 'x',
      arguments: { key_name: 'a', operation_args: { order_by: [{ key_name: 'b', ascending: true }] } },
    };
    const shownCall = view.toModel(call);
    expect(shownCall).toEqual({
      name: 'FUNC_1',
      label: 'x',
      arguments: { ARG_1: 'a', ARG_2: { order_by: [{ ARG_1: 'b', ascending: true }] } },
    });
    expect(view.fromModel(shownCall)).toEqual(call);
  });
});
