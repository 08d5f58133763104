// The three roles as a group of choices, each with what it allows.
import type { Role } from "book-catalogue";
import { ROLE_ALLOWS, ROLE_NAMES, ROLES } from "../roles.js";

export function RoleChoice(props: { value: Role; onChange: (role: Role) => void }) {
  return (
    <fieldset class="roles">
      <legend>Role</legend>
      {ROLES.map((role) => (
        <label key={role} class="check role">
          <input
            type="radio"
            name="role"
            value={role}
            checked={props.value === role}
            onChange={() => props.onChange(role)}
          />
          <span>
            {ROLE_NAMES[role]}
            <span class="hint">{ROLE_ALLOWS[role]}</span>
          </span>
        </label>
      ))}
    </fieldset>
  );
}
