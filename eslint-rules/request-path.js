/**
 * No recursion in the code that handles a request before its body is known to be shallow
 * (issue 26): a JSON body of 64 kB can nest 30,000 levels, and a function that calls itself
 * once per level overflows the stack into a 500. The files listed in eslint.config.js under
 * this rule (the HTTP edge's middleware and the text helpers it calls) walk values with an
 * explicit stack instead; a function that calls itself there (directly, or
 * through map, forEach and the like) fails lint.
 */

/** The function node a declarator or declaration names, if it is one. */
function namedFunction(node) {
  if (node.type === 'FunctionDeclaration') return node;
  if (node.type === 'VariableDeclarator' && node.init && /^(ArrowFunctionExpression|FunctionExpression)$/.test(node.init.type)) return node.init;
  return undefined;
}

/** Iteration methods that call the function they are given once per element. */
const ITERATES = /^(map|flatMap|forEach|filter|some|every|find|findIndex|findLast|findLastIndex|reduce|reduceRight|sort|toSorted)$/;

/** Whether this reference calls the function: as the callee, or handed to an iteration method. */
function calls(identifier) {
  const parent = identifier.parent;
  if (parent.type === 'CallExpression' && parent.callee === identifier) return true;
  return (
    parent.type === 'CallExpression' &&
    parent.arguments.includes(identifier) &&
    parent.callee.type === 'MemberExpression' &&
    parent.callee.property.type === 'Identifier' &&
    ITERATES.test(parent.callee.property.name)
  );
}

function within(inner, outer) {
  return inner.range[0] >= outer.range[0] && inner.range[1] <= outer.range[1];
}

export default {
  rules: {
    'no-recursion': {
      meta: {
        type: 'problem',
        docs: { description: 'functions on the request path before the depth limit do not call themselves (walk with an explicit stack)' },
        schema: [],
      },
      create(context) {
        const check = (node) => {
          const fn = namedFunction(node);
          if (!fn) return;
          const name = node.id?.type === 'Identifier' ? node.id.name : undefined;
          // A function declaration also declares its parameters: only its own name counts.
          for (const variable of context.sourceCode.getDeclaredVariables(node).filter((candidate) => candidate.name === name)) {
            for (const reference of variable.references) {
              if (reference.init || !within(reference.identifier, fn) || !calls(reference.identifier)) continue;
              context.report({
                node: reference.identifier,
                message: `${variable.name} calls itself: recursion over a request body can overflow the stack before the depth limit; walk it with an explicit stack (see nestsDeeperThan)`,
              });
            }
          }
        };
        return { FunctionDeclaration: check, VariableDeclarator: check };
      },
    },
  },
};
