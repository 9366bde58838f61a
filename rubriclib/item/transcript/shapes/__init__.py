"""The shapes a run's messages are recorded in, a module each, as their owners write them:
OpenAI Chat Completions (`chat`), Anthropic Messages (`anthropic`), OpenAI Responses
(`responses`), LangChain (`langchain`), Pydantic AI (`pydantic_ai`), smolagents' memory
(`smolagents`). `reading` tells them apart and reads a run with one of them."""
