// Agent profiles in Postgres (table agent_profiles): read by the rules step and the CLI.
import type { SqlExecutor } from '../db/sql-executor.js';
import { AGENT_TOOLS, type AgentProfile, type AgentToolName } from './contracts.js';

type ProfileRow = {
  name: string;
  description: string;
  instructions: string;
  tools: string[];
  max_steps: number;
  model: string | null;
  sends_need_approval: boolean;
};

const COLUMNS = 'name, description, instructions, tools, max_steps, model, sends_need_approval';

function profileOf(row: ProfileRow): AgentProfile {
  return {
    name: row.name,
    description: row.description,
    instructions: row.instructions,
    // A tool name edited by hand into something unknown is left out: the agent cannot call it.
    tools: row.tools.filter((t): t is AgentToolName => (AGENT_TOOLS as readonly string[]).includes(t)),
    maxSteps: row.max_steps,
    ...(row.model ? { model: row.model } : {}),
    sendsNeedApproval: row.sends_need_approval,
  };
}

export async function loadAgentProfile(db: SqlExecutor, name: string): Promise<AgentProfile | null> {
  const [row] = await db.query<ProfileRow>(`SELECT ${COLUMNS} FROM agent_profiles WHERE name = $1`, [name]);
  return row ? profileOf(row) : null;
}

export async function listAgentProfiles(db: SqlExecutor): Promise<AgentProfile[]> {
  return (await db.query<ProfileRow>(`SELECT ${COLUMNS} FROM agent_profiles ORDER BY name`, [])).map(profileOf);
}

export async function saveAgentProfile(db: SqlExecutor, p: AgentProfile): Promise<void> {
  await db.query(
    `INSERT INTO agent_profiles (name, description, instructions, tools, max_steps, model, sends_need_approval, updated_at)
     VALUES ($1, $2, $3, $4::text[], $5, $6, $7, clock_timestamp())
     ON CONFLICT (name) DO UPDATE SET description = EXCLUDED.description, instructions = EXCLUDED.instructions,
       tools = EXCLUDED.tools, max_steps = EXCLUDED.max_steps, model = EXCLUDED.model,
       sends_need_approval = EXCLUDED.sends_need_approval, updated_at = EXCLUDED.updated_at`,
    [p.name, p.description, p.instructions, p.tools, p.maxSteps, p.model ?? null, p.sendsNeedApproval],
  );
}
