package llm

// HoloBench is the reader prompt for the HoloBench tasks of Taguchi et al.
// (Adaptive-k, EMNLP 2025), Appendix A.1.2, verbatim except for the Markdown
// hard-line-break spaces the paper's typesetting left at line ends. The
// model reasons first and ends with "- **Answer:** …" or "No answer.".
const HoloBench Template = "You'll be given a set of sentences to read through carefully. Once you've reviewed them, I'll ask you a question related to the information in those sentences. Your job is to think critically about the details, analyze the sentences in relation to the question, and then provide your answer. If the information clearly supports a partial answer, provide that. However, if the evidence is unclear or insufficient, it is okay to respond with \"No answer.\"\n" +
	"\n" +
	"**Input:**\n" +
	"- **Sentences:**\n" +
	"```\n" +
	"{context}\n" +
	"```\n" +
	"\n" +
	"- **Question:**\n" +
	"```\n" +
	"{question}\n" +
	"```\n" +
	"\n" +
	"**Response:**\n" +
	"- **Reasoning:**\n" +
	"- [Describe how you thought through the sentences and how they helped you reach your conclusion. If the evidence is unclear or insufficient to provide a reliable answer, explain why. Your reasoning should not exceed 10,000 words.]\n" +
	"- **Answer:** [Provide an answer only if it is clearly supported by the information in the sentences. If the evidence is unclear or insufficient, respond with \"No answer.\"]"
