// Throws at top level (outcome 'error').
throw new Error('hostile: thrown on purpose');
