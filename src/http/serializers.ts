// Fastify compiles a serializer (fast-json-stringify) for each answer of each route, in each
// plugin's context: some 190 at every start, most of them one of a few failure envelopes, alike
// on every route. Each distinct schema (with the shared schemas it may refer to) is compiled
// once here and its serializer given to every route that declares it: what each answer is
// written as is unchanged. What it saves a start: docs/architecture.md.
import { SerializerSelector } from "@fastify/fast-json-stringify-compiler";
import type { FastifyServerOptions } from "fastify";

type Factory = NonNullable<
  NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]
>["buildSerializer"];
type Serializer = (data: unknown) => string;

// The serializers are pure functions of their schema: any app of this process may share them.
const compiled = new Map<string, Serializer>();
const select = SerializerSelector();

/** Fastify's own serializers, one per distinct schema. */
export const sharedSerializers: Factory = (externalSchemas, options) => {
  const compile = select(externalSchemas, options);
  const context = JSON.stringify([externalSchemas, options]);
  return (route) => {
    const key = `${context}\n${JSON.stringify(route.schema)}`;
    let serializer = compiled.get(key);
    if (serializer === undefined) {
      serializer = compile(route);
      compiled.set(key, serializer);
    }
    return serializer;
  };
};
