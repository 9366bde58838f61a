/* Appended to Material for MkDocs' search worker by docs/hooks/search_query.py: a query is read
   the way the index is split (mkdocs.yml's search separator), so a flag typed as the docs write
   it is found. Patches lunr, the worker's search engine, before the first query arrives. */
(function (lunr) {
  /* Words are cut at the separator by Material's own query transform; lunr's lexer cuts only at
     spaces, else it would cut "checklist-answers" or "Ctrl-C" at the hyphen the index keeps. */
  lunr.QueryLexer.termSeparator = /\s+/

  /* A leading "-" starts a flag ("--frozen", "-o"), not lunr's "must not contain". */
  const lexText = lunr.QueryLexer.lexText
  lunr.QueryLexer.lexText = function (lexer) {
    if (lexer.width() === 0)
      while (lexer.str.charAt(lexer.pos) === "-")
        lexer.pos += 1
    return lexText(lexer)
  }

  /* A flag is found while it is typed ("--res" finds --resume), as Material makes other words. */
  const clause = lunr.Query.prototype.clause
  lunr.Query.prototype.clause = function (query) {
    if (query.term.startsWith("-") && !("wildcard" in query))
      query.wildcard = lunr.Query.wildcard.TRAILING
    return clause.call(this, query)
  }
})(self.lunr)
